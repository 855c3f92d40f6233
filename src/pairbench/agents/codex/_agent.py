"""The ``codex`` agent: ``codex exec --json``, one run per attempt.

Settings (every key optional except ``model``)::

    model: gpt-5.5                # -m; pinned, the same in every arm
    executable: codex             # resolved on the arm's scrubbed PATH, or an absolute path
    sandbox: read-only            # -s read-only | workspace-write | danger-full-access
    config: {}                    # more -c overrides: key -> value (written as TOML)
    extra_args: []                # appended verbatim before the prompt

Each of the arm's MCP servers is passed with ``-c mcp_servers.<name>.*`` (stdio:
``command``/``args``/``env``; http: ``url`` and ``http_headers``, which carry the trial
headers), ``default_tools_approval_mode="approve"`` (``exec`` runs with approval policy
``never`` and would otherwise reject every MCP call) and ``required=true`` (or codex does not
wait for the server: its first request would carry none of its tools).
``--ignore-user-config`` and a ``CODEX_HOME`` inside the workdir keep the user's config out.
stdin is ``/dev/null`` (Codex reads piped stdin as more prompt).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import Field

from pairbench.agents._cli import (
    CliRun,
    Stop,
    cli_output,
    emit_all,
    place_attachments,
    resolve_executable,
    run_stamped,
)
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure
from pairbench.agents._settings import AdapterSettings
from pairbench.agents.codex._events import CodexEventParser

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


def mcp_overrides(
    mcp_config: dict[str, Any] | None, header_env: dict[str, str] | None = None
) -> list[str]:
    """``-c`` arguments for every server of a Claude-Code-style ``mcpServers`` config.

    With ``header_env``, HTTP header values go into it (variable -> value, for codex's
    environment) and codex reads them by name (``env_http_headers``): a bearer token or API
    key is then on no command line (``ps`` shows argv to every user) and in no transcript.
    """
    args: list[str] = []
    for n, (name, spec) in enumerate(((mcp_config or {}).get("mcpServers") or {}).items()):
        key = f"mcp_servers.{toml_key(name)}"
        values: dict[str, Any]
        if spec.get("type", "stdio") == "stdio":
            values = {"command": spec["command"], "args": list(spec.get("args") or [])}
            if spec.get("env"):
                values["env"] = dict(spec["env"])
        else:
            values = {"url": spec["url"]}
            headers = dict(spec.get("headers") or {})
            if headers and header_env is not None:
                names = {h: f"PAIRBENCH_MCP_HEADER_{n}_{i}" for i, h in enumerate(headers)}
                header_env.update({names[h]: v for h, v in headers.items()})
                values["env_http_headers"] = names
            elif headers:
                values["http_headers"] = headers
        values["default_tools_approval_mode"] = APPROVAL
        # Without it codex 0.171 does not wait for a stdio server: the first request has
        # none of its tools. Required, a server that fails to start stops codex (exit 1,
        # "required MCP servers failed to initialize") before any model request.
        values["required"] = True
        for field, value in values.items():
            args += ["-c", f"{key}.{field}={toml_value(value)}"]
    return args


_MCP_FAILED = re.compile(r"required MCP servers failed to initialize: (.*)")


def _failed_servers(stderr: list[str], mcp_config: dict[str, Any] | None) -> list[str]:
    """The arm's servers that codex's stderr says failed to initialize."""
    found = [m.group(1) for line in stderr if (m := _MCP_FAILED.search(line))]
    names = list((mcp_config or {}).get("mcpServers") or {})
    return [n for n in names if any(f.startswith(f"{n}:") or f" {n}:" in f for f in found)]


class CodexSettings(AdapterSettings):
    """The ``codex`` adapter's settings."""

    example = "{model: gpt-5.5, sandbox: read-only}"

    model: str = Field(min_length=1, description="-m, pinned: the same in every arm")
    executable: str = "codex"
    sandbox: Literal["read-only", "workspace-write", "danger-full-access"] = "read-only"
    config: dict[str, Any] = Field(default_factory=dict)
    """More ``-c key=value`` overrides (values written as TOML), e.g. a model provider."""
    extra_args: list[str] = Field(default_factory=list)

    def endpoint(self) -> str:
        """The model endpoint's URL, as far as the settings say."""
        provider = self.config.get("model_provider")
        for key, value in self.config.items():
            if key == f"model_providers.{provider}.base_url":
                return str(value)
        table = self.config.get(f"model_providers.{provider}")
        if isinstance(table, dict) and table.get("base_url"):
            return str(table["base_url"])
        return "the default OpenAI endpoint"


class CodexAgent:
    """Runs ``codex exec --json`` once per attempt and parses its JSONL."""

    Settings = CodexSettings
    receives = frozenset({"mcp", "webmcp", "attachments"})
    """MCP servers (and WebMCP pages, through the bridge) by ``-c mcp_servers.*``;
    attachments placed in its working folder, read with its sandboxed shell."""
    version_args = ("--version",)

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = CodexSettings.parse(settings)

    @classmethod
    def describe(cls, settings: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
        """What run.json records of an arm: tool discovery and the pinned variables."""
        return {
            "tool_discovery": "not applicable (codex offers every MCP tool it lists)",
            "pinned_env": {},
        }

    def argv(
        self, exe: str, ctx: AgentContext, prompt: str, header_env: dict[str, str] | None = None
    ) -> list[str]:
        s = self.settings
        argv = [exe, "exec", "--json", "--skip-git-repo-check", "--ephemeral"]
        argv += ["--ignore-user-config", "-m", s.model]
        argv += ["-s", s.sandbox, "-C", str(ctx.workdir.resolve())]
        argv += mcp_overrides(ctx.mcp_config, header_env)
        for key, value in s.config.items():
            argv += ["-c", f"{key}={toml_value(value)}"]
        return [*argv, *s.extra_args, "--", prompt]

    async def run(self, ctx: AgentContext) -> AgentOutput:
        env = dict(ctx.env)
        for var, sub in (("CODEX_HOME", "codex-home"), ("HOME", "home")):
            (ctx.workdir / sub).mkdir(parents=True, exist_ok=True)
            env[var] = str((ctx.workdir / sub).resolve())
        exe = resolve_executable("codex", self.settings.executable, env)
        header_env: dict[str, str] = {}
        argv = self.argv(exe, ctx, place_attachments(ctx), header_env)
        env.update(header_env)
        ctx.transcript.emit(
            "agent_start",
            agent="codex",
            arm=ctx.arm,
            argv=argv,
            approval_mode=APPROVAL,
            env={"CODEX_HOME": env["CODEX_HOME"]},
        )
        parser = CodexEventParser(model_call_succeeded=ctx.signals.model_call_succeeded)

        def on_line(t: float, line: str) -> Stop | None:
            emit_all(ctx.transcript, parser.feed(t, line))
            return parser.stop

        run = await run_stamped(
            argv, env=env, cwd=ctx.workdir, transcript=ctx.transcript, on_line=on_line,
            limits=ctx.limits,
        )  # fmt: skip
        emit_all(ctx.transcript, parser.finish(ctx.transcript.now()))
        return self.output(ctx, parser, run)

    def output(self, ctx: AgentContext, parser: CodexEventParser, run: CliRun) -> AgentOutput:
        summary = parser.summary
        if summary.model_call_succeeded:
            ctx.signals.model_call_succeeded = True
        url = self.settings.endpoint()
        tail = " | ".join(run.stderr_tail[-3:])
        fix = "Fix: start the endpoint, or correct settings.config model_providers.<name>.base_url"
        error: str | None = None
        if run.aborted is not None:
            if not ctx.signals.model_call_succeeded:
                raise InfraFailure(
                    f"the model endpoint {url} is unreachable: codex said "
                    f"{run.aborted.reason!r}. {fix}"
                )
            error = f"model endpoint {url} failed mid-run: {run.aborted.reason}"
            return cli_output(ctx, "codex", summary.final_answer(), error, summary.metrics())
        if summary.thread_id is None and run.code != 0:
            for server in _failed_servers(run.stderr_tail, ctx.mcp_config):
                detail = "codex: required MCP server failed to initialize"
                ctx.transcript.emit(
                    "transport_failure", server=server, failure="connect", detail=detail
                )
            raise InfraFailure(f"codex exited {run.code} before it started a thread: {tail}")
        verdict = summary.verdict()
        if verdict.status == "api_error" and not ctx.signals.model_call_succeeded:
            what = "rejected authentication" if verdict.auth else "failed"
            raise InfraFailure(f"the model endpoint {url} {what}: {verdict.detail}. {fix}")
        if verdict.status != "ok":
            error = verdict.detail
        elif run.code != 0:
            error = f"codex exit code {run.code}: {tail}"
        if error is not None and run.code != 0 and verdict.status == "no_result":
            error += f" (exit code {run.code}: {tail})"
        models = tuple(summary.models)
        return cli_output(ctx, "codex", summary.final_answer(), error, summary.metrics(), models)
