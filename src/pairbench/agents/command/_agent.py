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

The attempt's declared limits (``budget.limits``) hold for the command and everything it
starts (``pairbench._confine``): stdout and stderr are streamed to the transcript in pieces
and counted, and the command is stopped as ``output_limit`` once one passes its limit;
memory, processes and file size are the kernel's limits, and reaching one ends the attempt
as ``memory_limit``, ``process_limit`` or ``disk_limit``. Each stream's byte count and
SHA-256 is in its ``stream_end`` event; bytes that are not UTF-8 are shown as U+FFFD.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from pairbench._confine import Confinement, LimitReached
from pairbench._process import kill_group, resolve_argv, spawn, stop_process
from pairbench._template import render
from pairbench.agents._cli import place_attachments
from pairbench.agents._protocol import AgentContext, AgentOutput
from pairbench.agents._settings import AdapterSettings
from pairbench.agents._stream import read_stream
from pairbench.spec._limits import format_size
from pairbench.store._records import Metric

_PASSTHROUGH = {"message", "tool_call", "tool_result", "final", "usage", "error"}
_TAIL_CHARS = 2000
"""The most of one stderr line kept for an error's reason: a record stays small."""
_OnPiece = Callable[[str, bool], None]
_CHECK_EVERY_S = 0.05


def _event_of(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):  # most output is not an event: skip the parse
        return None
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
        confinement = await asyncio.to_thread(Confinement.open, ctx.limits)
        try:
            proc = await spawn(
                *argv,
                stdin=asyncio.subprocess.PIPE if send_prompt else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=ctx.workdir,
                preexec=confinement.preexec,
            )
            try:
                return await self._communicate(
                    proc, ctx, prompt if send_prompt else None, confinement
                )
            finally:
                await stop_process(proc)
        finally:
            await asyncio.to_thread(confinement.close)

    async def _communicate(
        self,
        proc: asyncio.subprocess.Process,
        ctx: AgentContext,
        prompt: str | None,
        confinement: Confinement,
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
        # The plain answer's pieces: a line ends with "\n", a piece of a long line does not.
        plain: list[str] = []
        final: str | None = None
        stderr_tail: list[str] = []
        calls = 0
        per_stream = ctx.limits.output_per_stream

        def on_stdout(text: str, ends_line: bool) -> None:
            nonlocal final, calls
            event = _event_of(text) if ends_line else None
            if event is None:
                plain.append(text + "\n" if ends_line else text)
                if ends_line:
                    ctx.transcript.emit("stdout", line=text)
                else:
                    ctx.transcript.emit("stdout", line=text, partial=True)
                return
            kind = event.pop("kind")
            event.pop("t", None)
            ctx.transcript.emit(kind, **event)
            if kind == "final":
                final = str(event.get("text", ""))
            elif kind == "tool_call":
                calls += 1

        checked = [0.0]

        def on_stderr(text: str, ends_line: bool) -> None:
            ctx.transcript.emit("stderr", line=text, **({} if ends_line else {"partial": True}))
            stderr_tail[:] = [*stderr_tail[-19:], text[-_TAIL_CHARS:]]
            # A failed fork or allocation says so on stderr: where the kernel does not notify
            # (cgroup v1), that is when to read its counters (at most every 50 ms).
            now = time.monotonic()
            if now - checked[0] >= _CHECK_EVERY_S:
                checked[0] = now
                _stop_if_fired(proc, confinement)

        async def read(stream: asyncio.StreamReader, name: str, on: _OnPiece) -> None:
            tally = await read_stream(stream, per_stream, on)
            ctx.transcript.emit("stream_end", stream=name, bytes=tally.size, sha256=tally.sha256)
            if tally.exceeded:
                # Stop the writer now: it would otherwise block on a full pipe until the
                # trial timeout, and the limit, not the timeout, is what it reached.
                kill_group(proc.pid)
                if confinement.group is not None:
                    confinement.group.kill()  # also what left the process group
                overflowed.append(name)

        overflowed: list[str] = []
        code = await self._wait(
            proc, confinement, read(proc.stdout, "stdout", on_stdout),
            read(proc.stderr, "stderr", on_stderr),
        )  # fmt: skip
        if overflowed:
            raise LimitReached(
                "output_limit",
                f"{overflowed[0]} passed the {format_size(per_stream)} output limit",
            )
        reached = await asyncio.to_thread(
            confinement.verdict, code, stderr_tail, _written_folders(ctx)
        )
        if reached is not None:
            raise reached
        answer = final if final is not None else "".join(plain).strip()
        if code != 0:
            tail = " | ".join(stderr_tail[-3:])
            return AgentOutput(final_answer=answer or None, error=f"exit code {code}: {tail}")
        return AgentOutput(
            final_answer=answer,
            turns=Metric.missing("the command agent did not report turns"),
        )

    @staticmethod
    async def _wait(
        proc: asyncio.subprocess.Process,
        confinement: Confinement,
        *readers: Coroutine[Any, Any, None],
    ) -> int:
        """Read the streams to their end and wait for the agent; a group limit the kernel
        reports (its counter file changed) stops the agent at once."""
        notifier = confinement.watch()
        loop = asyncio.get_running_loop()
        if notifier is not None:

            def fired() -> None:
                notifier.drain()
                _stop_if_fired(proc, confinement)

            loop.add_reader(notifier.fd, fired)
        try:
            await asyncio.gather(*readers)
            return await proc.wait()
        finally:
            if notifier is not None:
                loop.remove_reader(notifier.fd)
                notifier.close()


def _stop_if_fired(proc: asyncio.subprocess.Process, confinement: Confinement) -> None:
    """Stop the agent and everything in its groups if the kernel counted a limit reached."""
    group = confinement.group
    if group is not None and group.fired():
        kill_group(proc.pid)
        group.kill()


def _written_folders(ctx: AgentContext) -> list[Path]:
    """Where the agent writes: its working folder and its TMPDIR (which may be elsewhere)."""
    folders = [ctx.workdir]
    tmp = ctx.env.get("TMPDIR")
    if tmp and not Path(tmp).is_relative_to(ctx.workdir):
        folders.append(Path(tmp))
    return folders
