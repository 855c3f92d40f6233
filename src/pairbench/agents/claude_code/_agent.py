"""The ``claude-code`` agent: ``claude -p ... --output-format stream-json``, one run per attempt.

Settings (:class:`ClaudeCodeSettings`; every key optional except ``model``)::

    model: sonnet                 # --model; pinned, the same in every arm
    executable: claude            # resolved on the arm's scrubbed PATH, or an absolute path
    max_turns: 20                 # --max-turns
    permission_mode: dontAsk      # --permission-mode (dontAsk denies what is not allowed)
    tools: ""                     # --tools: "" (no built-ins), "default", or a list
    allowed_tools: []             # added to mcp__<server>__* for each of the arm's servers
    disallowed_tools: []          # --disallowedTools
    tool_search: "false"          # ENABLE_TOOL_SEARCH, pinned per arm and recorded
    wait_for_mcp: true            # MCP_CONNECTION_NONBLOCKING=0: -p waits for MCP servers
    mcp_timeout_ms: 30000         # MCP_TIMEOUT and MCP_CONNECT_TIMEOUT_MS: the wait per server
    extra_args: []                # appended verbatim

Pinned in the child's environment and recorded (``pinned_env``): ``ENABLE_TOOL_SEARCH``,
``MCP_CONNECTION_NONBLOCKING=0`` and ``MCP_CONNECT_TIMEOUT_MS`` (in ``-p`` mode Claude Code
does not wait for its MCP servers by default, and when told to, only 5 s: a stdio server
still ``pending`` at ``init`` gives the first model request no tools, which silently
confounds a transport comparison), ``MCP_TIMEOUT``, and
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` / ``DISABLE_AUTOUPDATER=1`` (no calls home, no
self-update). ``CLAUDE_CONFIG_DIR`` and ``HOME`` are private folders of the attempt.

Failures land in the right outcome as the events arrive: a server not ``connected`` at
``init`` ends the attempt as ``infra`` (the harness's transport failed, not the agent); an
``api_retry`` for a connection failure or an auth rejection ends it at once, as ``infra``
while no model call has succeeded in the run, else as ``agent_error``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, field_validator

from pairbench.agents._cli import (
    CliRun,
    Stop,
    as_list,
    cli_output,
    emit_all,
    place_attachments,
    resolve_executable,
    run_stamped,
)
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure
from pairbench.agents._settings import AdapterSettings
from pairbench.agents.claude_code._stream import ClaudeStreamParser

DEFAULT_BASE_URL = "https://api.anthropic.com"


class ClaudeCodeSettings(AdapterSettings):
    """The ``claude-code`` adapter's settings."""

    example = "{model: sonnet, max_turns: 20}"

    model: str = Field(min_length=1, description="--model, pinned: the same in every arm")
    executable: str = "claude"
    """Found on the arm's scrubbed PATH, or an absolute path."""
    max_turns: int = Field(default=20, ge=1, le=10_000)
    permission_mode: Literal[
        "acceptEdits", "auto", "bypassPermissions", "manual", "default", "dontAsk", "plan"
    ] = "dontAsk"
    tools: str | list[str] = ""
    """``--tools``: ``""`` (no built-ins), ``default``, or a list such as ``[Read]``."""
    allowed_tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list)
    tool_search: str | None = None
    """``ENABLE_TOOL_SEARCH`` (``true``, ``false``, ``auto``, ``auto:N``); unset: the arm's
    ``agent.env`` value, else ``false``."""
    wait_for_mcp: bool = True
    """Pin ``MCP_CONNECTION_NONBLOCKING=0`` so ``-p`` waits for every MCP server."""
    mcp_timeout_ms: int = Field(default=30_000, ge=100, le=600_000)
    extra_args: list[str] = Field(default_factory=list)

    @field_validator("tool_search", mode="before")
    @classmethod
    def _bool_to_text(cls, value: Any) -> Any:
        return ("true" if value else "false") if isinstance(value, bool) else value

    def search(self, env: dict[str, str]) -> str:
        return self.tool_search or env.get("ENABLE_TOOL_SEARCH") or "false"

    def pinned_env(self, env: dict[str, str]) -> dict[str, str]:
        """Variables pinned for the child, recorded in run.json and the transcript."""
        pins = {
            "ENABLE_TOOL_SEARCH": self.search(env),
            "MCP_TIMEOUT": str(self.mcp_timeout_ms),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        if self.wait_for_mcp:
            # Blocking alone is not enough: -p waits only MCP_CONNECT_TIMEOUT_MS (5000 ms by
            # default in 2.1.197) for the servers, then starts the model with them "pending"
            # (a stdio tracker under load took 8-10 s). Both are pinned to mcp_timeout_ms.
            pins["MCP_CONNECTION_NONBLOCKING"] = "0"
            pins["MCP_CONNECT_TIMEOUT_MS"] = str(self.mcp_timeout_ms)
        return pins


def headers_by_name(config: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """``config`` with every HTTP header value moved into ``env`` (``PAIRBENCH_MCP_HEADER_<n>_<i>``)
    and named in the file as ``${VAR}``, which Claude Code expands in ``--mcp-config`` (2.1.197:
    a right token connected, a wrong one ``failed``): a bearer token or API key is then in no
    file of the attempt's folder, even while it runs (redaction cleans files only afterwards).
    """
    out: dict[str, Any] = {}
    for n, (name, spec) in enumerate((config.get("mcpServers") or {}).items()):
        headers = dict(spec.get("headers") or {}) if spec.get("type") == "http" else {}
        if headers:
            names = {h: f"PAIRBENCH_MCP_HEADER_{n}_{i}" for i, h in enumerate(headers)}
            env.update({names[h]: str(v) for h, v in headers.items()})
            spec = {**spec, "headers": {h: f"${{{names[h]}}}" for h in headers}}
        out[name] = spec
    return {**config, "mcpServers": out}


class ClaudeCodeAgent:
    """Runs Claude Code headless once per attempt and parses its stream-json."""

    Settings = ClaudeCodeSettings
    receives = frozenset({"mcp", "webmcp", "attachments"})
    """Surfaces it can be given: MCP servers (and WebMCP pages, through the bridge) by
    ``--mcp-config``; attachments placed in its working folder, read with ``Read``."""
    version_args = ("--version",)

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = ClaudeCodeSettings.parse(settings)

    @classmethod
    def receives_with(cls, settings: dict[str, Any]) -> frozenset[str]:
        """What it can be given with these settings: an attachment only with a file-reading
        tool (``tools: [Read]`` or ``default``), or it would sit unread in the folder."""
        tools = settings.get("tools", "")
        names = {tools} if isinstance(tools, str) else {str(t) for t in tools or []}
        if names & {"Read", "default"}:
            return cls.receives
        return cls.receives - {"attachments"}

    @classmethod
    def describe(cls, settings: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
        """What run.json records of an arm: tool discovery and the pinned variables."""
        parsed = ClaudeCodeSettings.parse(settings)
        return {"tool_discovery": parsed.search(env), "pinned_env": parsed.pinned_env(env)}

    def argv(self, exe: str, prompt: str, mcp_file: str, servers: list[str]) -> list[str]:
        s = self.settings
        allowed = [f"mcp__{name}__*" for name in servers] + s.allowed_tools
        argv = [exe, "-p", prompt, "--output-format", "stream-json", "--verbose"]
        argv += ["--mcp-config", mcp_file, "--strict-mcp-config"]
        argv += ["--tools", s.tools if isinstance(s.tools, str) else ",".join(s.tools)]
        if allowed:
            argv += ["--allowedTools", *allowed]
        if s.disallowed_tools:
            argv += ["--disallowedTools", *s.disallowed_tools]
        argv += ["--model", s.model, "--max-turns", str(s.max_turns)]
        argv += ["--permission-mode", s.permission_mode]
        argv += ["--setting-sources", "", "--no-session-persistence"]
        return argv + as_list(s.extra_args)

    async def run(self, ctx: AgentContext) -> AgentOutput:
        env = dict(ctx.env)
        config = headers_by_name(ctx.mcp_config or {"mcpServers": {}}, env)
        servers: dict[str, Any] = dict(config.get("mcpServers") or {})
        # Absolute: the CLI resolves a relative path against its own working folder.
        mcp_file = (ctx.workdir / "claude-mcp.json").resolve()
        mcp_file.write_text(json.dumps(config, indent=2), encoding="utf-8")
        pins = self.settings.pinned_env(env)
        env.update(pins)
        for var, sub in (("CLAUDE_CONFIG_DIR", "claude-config"), ("HOME", "home")):
            (ctx.workdir / sub).mkdir(parents=True, exist_ok=True)
            env[var] = str((ctx.workdir / sub).resolve())
        exe = resolve_executable("claude-code", self.settings.executable, env)
        prompt = place_attachments(ctx)
        argv = self.argv(exe, prompt, str(mcp_file), list(servers))
        transports = {n: str(v.get("type", "stdio")) for n, v in servers.items()}
        started = ctx.transcript.now()
        search = pins["ENABLE_TOOL_SEARCH"]
        ctx.transcript.emit(
            "agent_start",
            agent="claude-code",
            arm=ctx.arm,
            argv=argv,
            tool_search=search,
            env={**pins, "CLAUDE_CONFIG_DIR": env["CLAUDE_CONFIG_DIR"]},
        )
        parser = ClaudeStreamParser(
            transports, tool_search=search.lower() != "false", started_t=started
        )

        def on_line(t: float, line: str) -> Stop | None:
            emit_all(ctx.transcript, parser.feed(t, line))
            return parser.stop

        run = await run_stamped(
            argv, env=env, cwd=ctx.workdir, transcript=ctx.transcript, on_line=on_line,
            limits=ctx.limits,
        )  # fmt: skip
        emit_all(ctx.transcript, parser.finish(ctx.transcript.now()))
        return self.output(ctx, parser, run, env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL)

    def output(
        self, ctx: AgentContext, parser: ClaudeStreamParser, run: CliRun, url: str
    ) -> AgentOutput:
        summary = parser.summary
        if summary.model_turns:
            ctx.signals.model_call_succeeded = True
        tail = " | ".join(run.stderr_tail[-3:])
        if run.aborted is not None:
            return self._aborted(ctx, parser, run.aborted, url)
        if summary.init is None and summary.result is None and run.code != 0:
            raise InfraFailure(f"claude-code exited {run.code} before it started a session: {tail}")
        verdict = summary.verdict()
        metrics = summary.metrics()
        error: str | None = None
        if verdict.status == "api_error":
            if not ctx.signals.model_call_succeeded:
                what = "rejected authentication" if verdict.auth else "failed"
                raise InfraFailure(
                    f"the model endpoint {url} {what}: {verdict.detail}. Fix: check the "
                    "endpoint and its key (agent.env ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY)"
                )
            error = f"model provider error: {verdict.detail}"
        elif verdict.status == "max_turns":
            error = f"{verdict.detail} (--max-turns {self.settings.max_turns})"
        elif verdict.status != "ok":
            error = verdict.detail
            if run.code != 0:
                error += f" (exit code {run.code}: {tail})"
        models = tuple(summary.models)
        return cli_output(ctx, "claude-code", summary.final_answer(), error, metrics, models)

    def _aborted(
        self, ctx: AgentContext, parser: ClaudeStreamParser, stop: Stop, url: str
    ) -> AgentOutput:
        if stop.kind == "mcp":
            raise InfraFailure(f"claude-code started its model before {stop.reason}")
        if not ctx.signals.model_call_succeeded:
            raise InfraFailure(
                f"the model endpoint {url} is unreachable or refused claude-code ({stop.reason}). "
                "Fix: start the endpoint, or point agent.env.ANTHROPIC_BASE_URL at one that runs"
            )
        summary = parser.summary
        error = f"model endpoint {url} failed mid-run: {stop.reason}"
        return cli_output(
            ctx, "claude-code", summary.final_answer(), error, summary.metrics(), summary.models
        )
