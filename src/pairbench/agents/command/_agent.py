"""The command agent: any executable, run in its own process group with a scrubbed env.

Settings::

    command: [my-agent, --model, x]   # argv; ``${prompt}`` and other templates are filled
    stdin: prompt                     # "prompt" (default) sends the prompt on stdin; "none"

The child gets ``PAIRBENCH_PROMPT``-free env: the prompt is in the file named by
``PAIRBENCH_PROMPT_FILE``; the arm's MCP servers as a Claude-Code-style config in
``PAIRBENCH_MCP_CONFIG``; ``PAIRBENCH_SEED`` and ``PAIRBENCH_MODEL_SEED``; which trial it is in
``PAIRBENCH_RUN_ID``, ``PAIRBENCH_ARM``, ``PAIRBENCH_TASK``, ``PAIRBENCH_TRIAL`` and
``PAIRBENCH_ATTEMPT``.

Each stdout line that is a JSON object with a ``kind`` (the normalized transcript kinds:
``message``, ``tool_call``, ``tool_result``, ``final``, ``usage``...) becomes that event;
other lines are kept as ``stdout`` events. The final answer is the last ``final`` event,
or else the non-JSON stdout. A non-zero exit is an ``agent_error``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from pydantic import Field

from pairbench._process import resolve_argv, spawn, stop_process
from pairbench._template import render
from pairbench.agents._cli import place_attachments
from pairbench.agents._protocol import AgentContext, AgentOutput
from pairbench.agents._settings import AdapterSettings
from pairbench.store._records import Metric

_PASSTHROUGH = {"message", "tool_call", "tool_result", "final", "usage", "error"}


def _event_of(line: str) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("kind") in _PASSTHROUGH:
        return data
    return None


class CommandSettings(AdapterSettings):
    """The ``command`` adapter's settings."""

    example = "{command: [my-agent, --json], stdin: prompt}"

    command: list[str] = Field(min_length=1, description="the argv, e.g. [my-agent, --json]")
    stdin: Literal["prompt", "none"] = "prompt"
    """``prompt`` sends the prompt on stdin; ``none`` gives the child ``/dev/null``."""
    model: str | None = None
    """Recorded, not used: the model the command talks to (run.json; ``compare`` checks it)."""


class CommandAgent:
    """Runs ``settings.command`` once per attempt."""

    Settings = CommandSettings
    receives = frozenset({"mcp", "webmcp", "attachments"})
    """MCP servers (WebMCP pages through the bridge) in ``PAIRBENCH_MCP_CONFIG``; attachments
    placed in its working folder and named in the prompt."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = CommandSettings.parse(settings)

    async def run(self, ctx: AgentContext) -> AgentOutput:
        prompt = place_attachments(ctx)
        values = {"prompt": prompt, "seed": ctx.seed, "fixture": ctx.content}
        argv = resolve_argv([str(render(a, values)) for a in self.settings.command])
        prompt_file = (ctx.workdir / "prompt.md").resolve()
        prompt_file.write_text(prompt, encoding="utf-8")
        env = dict(ctx.env)
        env["PAIRBENCH_PROMPT_FILE"] = str(prompt_file)
        env["PAIRBENCH_SEED"] = str(ctx.seed)
        env["PAIRBENCH_MODEL_SEED"] = str(ctx.model_seed)
        # Which trial this is, so an agent need not parse its prompt to know its task.
        env["PAIRBENCH_RUN_ID"] = ctx.run_id
        env["PAIRBENCH_ARM"] = ctx.arm
        env["PAIRBENCH_TASK"] = ctx.task
        env["PAIRBENCH_TRIAL"] = str(ctx.trial)
        env["PAIRBENCH_ATTEMPT"] = str(ctx.attempt)
        if ctx.mcp_config is not None:
            config_file = (ctx.workdir / "mcp.json").resolve()
            config_file.write_text(json.dumps(ctx.mcp_config, indent=2), encoding="utf-8")
            env["PAIRBENCH_MCP_CONFIG"] = str(config_file)
        ctx.transcript.emit("agent_start", agent="command", arm=ctx.arm, argv=argv)
        send_prompt = self.settings.stdin == "prompt"
        proc = await spawn(
            *argv,
            stdin=asyncio.subprocess.PIPE if send_prompt else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=ctx.workdir,
        )
        try:
            return await self._communicate(proc, ctx, prompt if send_prompt else None)
        finally:
            await stop_process(proc)

    async def _communicate(
        self, proc: asyncio.subprocess.Process, ctx: AgentContext, prompt: str | None
    ) -> AgentOutput:
        assert proc.stdout is not None and proc.stderr is not None
        if prompt is not None and proc.stdin is not None:
            try:
                proc.stdin.write(prompt.encode("utf-8"))
                await proc.stdin.drain()
                proc.stdin.close()
            except (BrokenPipeError, ConnectionResetError):
                # The command exited, or closed stdin, without reading the prompt (it may
                # read PAIRBENCH_PROMPT_FILE instead): not an error; its output decides.
                pass
        plain: list[str] = []
        final: str | None = None
        stderr_tail: list[str] = []
        calls = 0

        async def read_stdout() -> None:
            nonlocal final, calls
            assert proc.stdout is not None
            async for raw in proc.stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                event = _event_of(line)
                if event is None:
                    plain.append(line)
                    ctx.transcript.emit("stdout", line=line)
                    continue
                kind = event.pop("kind")
                event.pop("t", None)
                ctx.transcript.emit(kind, **event)
                if kind == "final":
                    final = str(event.get("text", ""))
                elif kind == "tool_call":
                    calls += 1

        async def read_stderr() -> None:
            assert proc.stderr is not None
            async for raw in proc.stderr:
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                ctx.transcript.emit("stderr", line=line)
                stderr_tail[:] = [*stderr_tail[-19:], line]

        await asyncio.gather(read_stdout(), read_stderr())
        code = await proc.wait()
        answer = final if final is not None else "\n".join(plain).strip()
        if code != 0:
            tail = " | ".join(stderr_tail[-3:])
            return AgentOutput(final_answer=answer or None, error=f"exit code {code}: {tail}")
        return AgentOutput(
            final_answer=answer,
            turns=Metric.missing("the command agent did not report turns"),
        )
