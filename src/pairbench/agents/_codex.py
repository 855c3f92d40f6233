"""The ``codex`` agent: ``codex exec --json``, one run per attempt.

Settings (every key optional except ``model``)::

    model: gpt-5.5                # -m; pinned, the same in every arm
    executable: codex             # resolved on the arm's scrubbed PATH, or an absolute path
    sandbox: read-only            # -s read-only | workspace-write | danger-full-access
    config: {}                    # more -c overrides: key -> value (written as TOML)
    extra_args: []                # appended verbatim before the prompt

Each of the arm's MCP servers is passed with ``-c mcp_servers.<name>.*`` (stdio:
``command``/``args``/``env``; http: ``url`` and ``http_headers``, which carry the trial
headers) and ``default_tools_approval_mode="approve"``: ``exec`` runs with approval policy
``never`` and would otherwise reject every MCP call. ``--ignore-user-config`` and a
``CODEX_HOME`` inside the workdir keep the user's config out. stdin is ``/dev/null`` (Codex
reads piped stdin as more prompt).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pairbench.agents._claude_code import (
    as_list,
    check_settings,
    cli_output,
    emit_all,
    resolve_executable,
    run_stamped,
)
from pairbench.agents._codex_events import CodexEventParser
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure

_KEYS = {"model", "executable", "sandbox", "config", "extra_args"}
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
APPROVAL = "approve"


def toml_key(name: str) -> str:
    return name if _BARE_KEY.match(name) else json.dumps(name)


def toml_value(value: Any) -> str:
    """A TOML literal for a string, number, bool, list or flat table (JSON strings are TOML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def mcp_overrides(mcp_config: dict[str, Any] | None) -> list[str]:
    """``-c`` arguments for every server of a Claude-Code-style ``mcpServers`` config."""
    args: list[str] = []
    for name, spec in ((mcp_config or {}).get("mcpServers") or {}).items():
        key = f"mcp_servers.{toml_key(name)}"
        values: dict[str, Any]
        if spec.get("type", "stdio") == "stdio":
            values = {"command": spec["command"], "args": list(spec.get("args") or [])}
            if spec.get("env"):
                values["env"] = dict(spec["env"])
        else:
            values = {"url": spec["url"]}
            if spec.get("headers"):
                values["http_headers"] = dict(spec["headers"])
        values["default_tools_approval_mode"] = APPROVAL
        for field, value in values.items():
            args += ["-c", f"{key}.{field}={toml_value(value)}"]
    return args


class CodexAgent:
    """Runs ``codex exec --json`` once per attempt and parses its JSONL."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = dict(settings or {})

    def argv(self, exe: str, ctx: AgentContext) -> list[str]:
        s = self.settings
        argv = [exe, "exec", "--json", "--skip-git-repo-check", "--ephemeral"]
        argv += ["--ignore-user-config", "-m", str(s["model"])]
        argv += ["-s", str(s.get("sandbox", "read-only")), "-C", str(ctx.workdir)]
        argv += mcp_overrides(ctx.mcp_config)
        for key, value in dict(s.get("config") or {}).items():
            argv += ["-c", f"{key}={toml_value(value)}"]
        return [*argv, *as_list(s.get("extra_args")), "--", ctx.prompt]

    async def run(self, ctx: AgentContext) -> AgentOutput:
        check_settings("codex", self.settings, _KEYS)
        env = dict(ctx.env)
        for var, sub in (("CODEX_HOME", "codex-home"), ("HOME", "home")):
            (ctx.workdir / sub).mkdir(parents=True, exist_ok=True)
            env[var] = str(ctx.workdir / sub)
        exe = resolve_executable("codex", str(self.settings.get("executable", "codex")), env)
        argv = self.argv(exe, ctx)
        ctx.transcript.emit(
            "agent_start",
            agent="codex",
            arm=ctx.arm,
            argv=argv,
            approval_mode=APPROVAL,
            env={"CODEX_HOME": env["CODEX_HOME"]},
        )
        parser = CodexEventParser()
        code, tail = await run_stamped(
            argv,
            env=env,
            cwd=ctx.workdir,
            transcript=ctx.transcript,
            on_line=lambda t, line: emit_all(ctx.transcript, parser.feed(t, line)),
        )
        emit_all(ctx.transcript, parser.finish(ctx.transcript.now()))
        summary = parser.summary
        if summary.model_call_succeeded:
            ctx.signals.model_call_succeeded = True
        if summary.thread_id is None and code != 0:
            raise InfraFailure(
                f"codex exited {code} before it started a thread: {' | '.join(tail[-3:])}"
            )
        verdict = summary.verdict()
        error: str | None = None
        if verdict.status == "api_error" and not ctx.signals.model_call_succeeded:
            what = "rejected authentication" if verdict.auth else "failed"
            raise InfraFailure(f"the model provider {what}: {verdict.detail}")
        if verdict.status != "ok":
            error = verdict.detail
        elif code != 0:
            error = f"codex exit code {code}: {' | '.join(tail[-3:])}"
        if error is not None and code != 0 and verdict.status == "no_result":
            error += f" (exit code {code}: {' | '.join(tail[-3:])})"
        return cli_output(ctx, "codex", summary.final_answer(), error, summary.metrics())
