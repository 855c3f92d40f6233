"""What the CLI adapters (Claude Code, Codex) share: the stamped subprocess runner, the
normalized event and verdict types, executable lookup, attachments, and the output builder.

**Usage**::

    exe = resolve_executable("codex", "codex", env)
    run = await run_stamped(argv, env=env, cwd=workdir, transcript=tr, on_line=feed,
                            limits=limits)
    run.code, run.stderr_tail, run.aborted   # aborted: why ``on_line`` stopped the child

``on_line`` may return a :class:`Stop` to end the child at once (its whole process group is
killed): the adapters do so when the CLI's own events say it cannot reach its model or its
MCP servers, instead of waiting for the trial timeout.

``limits`` (the attempt's ``budget.limits``) are enforced as for a ``command`` agent: memory,
processes and file size by the kernel (``pairbench._confine``), output per stream counted as
it is read; a limit reached raises ``LimitReached``, the attempt's outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pairbench._confine import Confinement, LimitReached
from pairbench._process import spawn, stop_process
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure
from pairbench.spec._limits import Limits, format_size
from pairbench.store._records import Metric, Seeding
from pairbench.store._transcript import Transcript

LINE_LIMIT = 64 * 1024 * 1024
"""Longest stdout line read (tool results can be large; asyncio's default is 64 KiB)."""


@dataclass(frozen=True)
class Event:
    """One normalized transcript event, stamped with the arrival time of its line."""

    t: float
    kind: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class Verdict:
    status: Literal["ok", "max_turns", "api_error", "error", "no_result"]
    detail: str = ""
    auth: bool = False
    """An API failure that is an authentication (or login) rejection."""


@dataclass(frozen=True)
class Stop:
    """Returned by an ``on_line`` callback: end the child now, for this reason."""

    reason: str
    kind: Literal["endpoint", "mcp"]
    """``endpoint``: the model endpoint is unreachable or refused us; ``mcp``: a server under
    test was not connected when the model started."""


class CliRun(NamedTuple):
    code: int | None
    """The exit code (None: the child was stopped by ``on_line``)."""
    stderr_tail: list[str]
    aborted: Stop | None


def resolve_executable(agent: str, name: str, env: dict[str, str]) -> str:
    """``name`` found on the scrubbed ``PATH`` (or checked, when it is a path)."""
    if os.sep in name:
        if os.access(name, os.X_OK):
            return str(Path(name).resolve())
        raise InfraFailure(f"{agent}: executable {name!r} does not exist or is not executable")
    found = shutil.which(name, path=env.get("PATH", ""))
    if found is None:
        raise InfraFailure(
            f"{agent}: {name!r} not found on the arm's PATH ({env.get('PATH', '')!r}); "
            "set agent.env.PATH or settings.executable"
        )
    return str(Path(found).resolve())


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(value)] if isinstance(value, str) else [str(v) for v in value]


def emit_all(transcript: Transcript, events: list[Event]) -> None:
    for event in events:
        transcript.emit(event.kind, t=event.t, **event.fields)


def place_attachments(ctx: AgentContext) -> str:
    """Copy the arm's attachments into the attempt's folder (the CLI's working folder), log
    the SHA-256 of exactly what the agent was given, and return the prompt naming them.

    A prompt that names ``${attachments}`` already says where they are (the runner filled
    it); otherwise one line is appended saying which files are in the working folder.
    """
    if not ctx.attachments:
        return ctx.prompt
    given = []
    for source in ctx.attachments:
        target = ctx.workdir / source.name
        shutil.copyfile(source, target)
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        given.append({"name": source.name, "path": str(target), "sha256": digest})
    ctx.transcript.emit("attachments_given", files=given, how="placed in the working folder")
    if ctx.extra.get("prompt_names_attachments"):
        return ctx.prompt
    names = ", ".join(f"./{g['name']}" for g in given)
    return f"{ctx.prompt}\n\nThe supplied file(s) are in your working folder: {names}"


def seeding(ctx: AgentContext, agent: str) -> Seeding:
    return Seeding(status="unseeded", model_seed=ctx.model_seed, reason=f"{agent} takes no seed")


def cli_output(
    ctx: AgentContext,
    agent: str,
    answer: str | None,
    error: str | None,
    metrics: dict[str, Metric],
    models: tuple[str, ...] = (),
) -> AgentOutput:
    """Close a CLI agent's transcript (``final`` or ``error``) and build its output."""
    if error is None:
        ctx.transcript.emit("final", text=answer or "")
    else:
        ctx.transcript.emit("error", message=error)
    m = metrics
    return AgentOutput(
        final_answer=answer,
        error=error,
        turns=m["turns"],
        agent_ms=m["agent_ms"],
        input_tokens=m["input_tokens"],
        output_tokens=m["output_tokens"],
        uncached_input_tokens=m["uncached_input_tokens"],
        cache_creation_input_tokens=m["cache_creation_input_tokens"],
        cache_read_input_tokens=m["cache_read_input_tokens"],
        total_tokens=m["total_tokens"],
        cost_usd=m["cost_usd"],
        seeding=seeding(ctx, agent),
        models=models,
    )


async def run_stamped(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    transcript: Transcript,
    on_line: Callable[[float, str], Stop | None],
    limits: Limits | None = None,
) -> CliRun:
    """Run ``argv`` (stdin ``/dev/null``, own process group); feed stamped stdout lines.

    Cancelled (timeout, Ctrl-C), or stopped by ``on_line``: the whole group is killed
    before this returns or the cancellation propagates. A limit reached (``limits``)
    raises ``LimitReached`` once the group is gone.
    """
    limits = limits if limits is not None else Limits()
    confinement = await asyncio.to_thread(Confinement.open, limits)
    try:
        return await _run_confined(argv, env, cwd, transcript, on_line, confinement)
    finally:
        await asyncio.to_thread(confinement.close)


async def _run_confined(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    transcript: Transcript,
    on_line: Callable[[float, str], Stop | None],
    confinement: Confinement,
) -> CliRun:
    proc = await spawn(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
        limit=LINE_LIMIT,
        preexec=confinement.preexec,
    )
    per_stream = confinement.limits.output_per_stream
    tail: list[str] = []
    stopped: list[Stop] = []
    overflowed: list[str] = []

    def counted(name: str, size: int, total: list[int]) -> bool:
        total[0] += size
        if total[0] > per_stream and not overflowed:
            overflowed.append(name)
        return bool(overflowed)

    async def read_stdout() -> None:
        assert proc.stdout is not None
        total = [0]
        async for raw in proc.stdout:
            t = transcript.now()  # stamped as it arrives, before anything else
            if counted("stdout", len(raw), total):
                return
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            transcript.emit("raw", t=t, line=line)
            stop = on_line(t, line)
            if stop is not None:
                transcript.emit("agent_stopped", t=transcript.now(), reason=stop.reason)
                stopped.append(stop)
                return

    async def read_stderr() -> None:
        assert proc.stderr is not None
        total = [0]
        async for raw in proc.stderr:
            if counted("stderr", len(raw), total):
                return
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            transcript.emit("stderr", line=line)
            tail[:] = [*tail[-19:], line]

    code: int | None = None
    stderr_task = asyncio.ensure_future(read_stderr())
    try:
        await read_stdout()
        if not stopped and not overflowed:
            await stderr_task
            code = await proc.wait() if not overflowed else None
    finally:
        await stop_process(proc)  # also takes grandchildren left in the group
        if confinement.group is not None:
            confinement.group.kill()  # and what left the process group
        if not stderr_task.done():
            stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_task
    if overflowed:
        raise LimitReached(
            "output_limit", f"{overflowed[0]} passed the {format_size(per_stream)} output limit"
        )
    reached = await asyncio.to_thread(confinement.verdict, code, tail, [cwd])
    if reached is not None:
        raise reached
    return CliRun(code, tail, stopped[0] if stopped else None)
