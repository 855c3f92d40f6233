"""The ``claude-code`` agent: ``claude -p ... --output-format stream-json``, one run per attempt.

Settings (every key optional except ``model``)::

    model: sonnet                 # --model; pinned, the same in every arm
    executable: claude            # resolved on the arm's scrubbed PATH, or an absolute path
    max_turns: 20                 # --max-turns
    permission_mode: dontAsk      # --permission-mode (dontAsk denies what is not allowed)
    tools: ""                     # --tools: "" (no built-ins), "default", or a list
    allowed_tools: []             # added to mcp__<server>__* for each of the arm's servers
    disallowed_tools: []          # --disallowedTools
    tool_search: "false"          # ENABLE_TOOL_SEARCH, pinned per arm and recorded
    extra_args: []                # appended verbatim before stdin is closed

The child runs with the scrubbed environment plus ``ENABLE_TOOL_SEARCH``, an isolated
``CLAUDE_CONFIG_DIR`` and ``HOME`` inside the attempt's workdir, in its own process group
(killed as a group on timeout or cancel), with stdin at ``/dev/null``. Each stdout line is
stamped with the monotonic clock as it arrives and kept in the transcript as a ``raw``
event; ``_claude_stream`` turns the lines into normalized events.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pairbench._process import die_with_parent, stop_process
from pairbench.agents._claude_stream import ClaudeStreamParser, Event
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure
from pairbench.agents._transcript import Transcript
from pairbench.store._records import Seeding

LINE_LIMIT = 64 * 1024 * 1024
"""Longest stdout line read (tool results can be large; asyncio's default is 64 KiB)."""

_KEYS = {
    "model",
    "executable",
    "max_turns",
    "permission_mode",
    "tools",
    "allowed_tools",
    "disallowed_tools",
    "tool_search",
    "extra_args",
}


def check_settings(agent: str, settings: dict[str, Any], known: set[str]) -> None:
    """Unknown keys and a missing model are set-up errors (``infra``: the run stops)."""
    unknown = sorted(set(settings) - known)
    if unknown:
        raise InfraFailure(f"{agent}: unknown setting(s) {unknown}; known: {sorted(known)}")
    if not settings.get("model"):
        raise InfraFailure(f"{agent} needs settings.model (pinned, the same in every arm)")


def resolve_executable(agent: str, name: str, env: dict[str, str]) -> str:
    """``name`` found on the scrubbed ``PATH`` (or checked, when it is a path)."""
    if os.sep in name:
        if os.access(name, os.X_OK):
            return name
        raise InfraFailure(f"{agent}: executable {name!r} does not exist or is not executable")
    found = shutil.which(name, path=env.get("PATH", ""))
    if found is None:
        raise InfraFailure(
            f"{agent}: {name!r} not found on the arm's PATH ({env.get('PATH', '')!r}); "
            "set agent.env.PATH or settings.executable"
        )
    return found


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(value)] if isinstance(value, str) else [str(v) for v in value]


def seeding(ctx: AgentContext, agent: str) -> Seeding:
    return Seeding(status="unseeded", model_seed=ctx.model_seed, reason=f"{agent} takes no seed")


def cli_output(
    ctx: AgentContext, agent: str, answer: str | None, error: str | None, metrics: dict[str, Any]
) -> AgentOutput:
    """Close a CLI agent's transcript (``final`` or ``error``) and build its output."""
    if error is None:
        ctx.transcript.emit("final", text=answer or "")
    else:
        ctx.transcript.emit("error", message=error)
    return AgentOutput(
        final_answer=answer,
        error=error,
        turns=metrics["turns"],
        agent_ms=metrics["agent_ms"],
        input_tokens=metrics["input_tokens"],
        output_tokens=metrics["output_tokens"],
        cost_usd=metrics["cost_usd"],
        seeding=seeding(ctx, agent),
    )


def emit_all(transcript: Transcript, events: list[Event]) -> None:
    for event in events:
        transcript.emit(event.kind, t=event.t, **event.fields)


async def run_stamped(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    transcript: Transcript,
    on_line: Callable[[float, str], None],
) -> tuple[int, list[str]]:
    """Run ``argv`` (stdin ``/dev/null``, own process group); feed stamped stdout lines.

    Returns the exit code and the last stderr lines. Cancelled (timeout, Ctrl-C): the whole
    group is killed before the cancellation propagates.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
        preexec_fn=die_with_parent,
        limit=LINE_LIMIT,
    )
    tail: list[str] = []

    async def read_stdout() -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            t = transcript.now()  # stamped as it arrives, before anything else
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            transcript.emit("raw", t=t, line=line)
            on_line(t, line)

    async def read_stderr() -> None:
        assert proc.stderr is not None
        async for raw in proc.stderr:
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            transcript.emit("stderr", line=line)
            tail[:] = [*tail[-19:], line]

    try:
        await asyncio.gather(read_stdout(), read_stderr())
        code = await proc.wait()
    finally:
        await stop_process(proc)  # also takes grandchildren left in the group
    return code, tail


class ClaudeCodeAgent:
    """Runs Claude Code headless once per attempt and parses its stream-json."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = dict(settings or {})

    def argv(self, exe: str, ctx: AgentContext, mcp_file: Path, servers: list[str]) -> list[str]:
        s = self.settings
        tools = s.get("tools", "")
        allowed = [f"mcp__{name}__*" for name in servers] + as_list(s.get("allowed_tools"))
        argv = [exe, "-p", ctx.prompt, "--output-format", "stream-json", "--verbose"]
        argv += ["--mcp-config", str(mcp_file), "--strict-mcp-config"]
        argv += ["--tools", tools if isinstance(tools, str) else ",".join(as_list(tools))]
        if allowed:
            argv += ["--allowedTools", *allowed]
        if s.get("disallowed_tools"):
            argv += ["--disallowedTools", *as_list(s["disallowed_tools"])]
        argv += ["--model", str(s["model"]), "--max-turns", str(int(s.get("max_turns", 20)))]
        argv += ["--permission-mode", str(s.get("permission_mode", "dontAsk"))]
        argv += ["--setting-sources", "", "--no-session-persistence"]
        return argv + as_list(s.get("extra_args"))

    def tool_search(self, ctx: AgentContext) -> str:
        value = self.settings.get("tool_search", ctx.env.get("ENABLE_TOOL_SEARCH", "false"))
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    async def run(self, ctx: AgentContext) -> AgentOutput:
        check_settings("claude-code", self.settings, _KEYS)
        config = ctx.mcp_config or {"mcpServers": {}}
        servers: dict[str, Any] = dict(config.get("mcpServers") or {})
        mcp_file = ctx.workdir / "claude-mcp.json"
        mcp_file.write_text(json.dumps(config, indent=2), encoding="utf-8")
        search = self.tool_search(ctx)
        env = dict(ctx.env)
        env["ENABLE_TOOL_SEARCH"] = search
        for var, sub in (("CLAUDE_CONFIG_DIR", "claude-config"), ("HOME", "home")):
            (ctx.workdir / sub).mkdir(parents=True, exist_ok=True)
            env[var] = str(ctx.workdir / sub)
        exe = resolve_executable("claude-code", str(self.settings.get("executable", "claude")), env)
        argv = self.argv(exe, ctx, mcp_file, list(servers))
        transports = {n: str(v.get("type", "stdio")) for n, v in servers.items()}
        started = ctx.transcript.now()
        ctx.transcript.emit(
            "agent_start",
            agent="claude-code",
            arm=ctx.arm,
            argv=argv,
            tool_search=search,
            env={"ENABLE_TOOL_SEARCH": search, "CLAUDE_CONFIG_DIR": env["CLAUDE_CONFIG_DIR"]},
        )
        parser = ClaudeStreamParser(
            transports, tool_search=search.lower() != "false", started_t=started
        )
        code, tail = await run_stamped(
            argv,
            env=env,
            cwd=ctx.workdir,
            transcript=ctx.transcript,
            on_line=lambda t, line: emit_all(ctx.transcript, parser.feed(t, line)),
        )
        emit_all(ctx.transcript, parser.finish(ctx.transcript.now()))
        return self.output(ctx, parser, code, tail)

    def output(
        self, ctx: AgentContext, parser: ClaudeStreamParser, code: int, tail: list[str]
    ) -> AgentOutput:
        summary = parser.summary
        if summary.model_turns:
            ctx.signals.model_call_succeeded = True
        if summary.init is None and summary.result is None and code != 0:
            raise InfraFailure(
                f"claude-code exited {code} before it started a session: {' | '.join(tail[-3:])}"
            )
        verdict = summary.verdict()
        metrics = summary.metrics()
        error: str | None = None
        if verdict.status == "api_error":
            if not ctx.signals.model_call_succeeded:
                what = "rejected authentication" if verdict.auth else "failed"
                raise InfraFailure(f"the model provider {what}: {verdict.detail}")
            error = f"model provider error: {verdict.detail}"
        elif verdict.status == "max_turns":
            error = f"{verdict.detail} (--max-turns {int(self.settings.get('max_turns', 20))})"
        elif verdict.status != "ok":
            error = verdict.detail
            if code != 0:
                error += f" (exit code {code}: {' | '.join(tail[-3:])})"
        return cli_output(ctx, "claude-code", summary.final_answer(), error, metrics)
