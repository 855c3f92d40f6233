"""One engine process: request on stdin, report on stdout, its whole group killed at the
deadline. Shared by the ``command`` and ``python`` adapters."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from pairbench._process import spawn, stop_process
from pairbench.studies.attribution_reliability.engines._outcome import (
    RAW_STDOUT_CAP,
    EngineOutcome,
    FailureKind,
    elapsed_ms,
    outcome_of,
    tail,
)

EXIT_GRACE_S = 0.5
"""How long stdout may stay open after the engine exits: a grandchild that inherited it
(a browser left running) must not turn a finished engine into a timeout."""


EXIT_POLL_S = 0.05


class Exited(NamedTuple):
    """How the process ended: its code, stdout, and stderr (decoded)."""

    code: int
    stdout: str
    stderr: str


class Verdict(NamedTuple):
    """What a non-zero exit was: its failure kind and message."""

    failure: FailureKind
    message: str


Explain = Callable[[Exited], Verdict]
"""Reads a non-zero exit (the python worker has its own codes and words)."""


def exit_verdict(ended: Exited) -> Verdict:
    """``crash``: ``exit code 3`` or ``killed by signal 9``, plus the last stderr line."""
    what = f"killed by signal {-ended.code}" if ended.code < 0 else f"exit code {ended.code}"
    last = tail(ended.stderr, 1)
    return Verdict("crash", f"the engine ended with {what}" + (f": {last}" if last else ""))


async def run_process(
    argv: Sequence[str],
    stdin: bytes,
    *,
    env: Mapping[str, str],
    workdir: Path,
    timeout_s: float,
    who: str,
    explain: Explain = exit_verdict,
) -> EngineOutcome:
    """Start ``argv`` in its own process group, feed it ``stdin`` and read its report.

    Every ending becomes an outcome: a non-zero exit is what ``explain`` says (``crash``
    by default); a clean exit is read by ``outcome_of``; the deadline kills the whole group
    and is ``timeout``. The group is killed in every case, so nothing the engine started
    outlives the call.
    """
    started = time.monotonic()
    err = bytearray()
    proc = await spawn(
        *argv,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=workdir,
    )
    try:
        ended = await asyncio.wait_for(_communicate(proc, stdin, err), timeout_s)
    except TimeoutError:
        await stop_process(proc)
        return EngineOutcome(
            failure="timeout",
            message=f"{who} did not answer within {timeout_s:g} s; its process group was killed",
            stderr_tail=tail(err.decode("utf-8", errors="replace")),
            duration_ms=elapsed_ms(started),
        )
    finally:
        await stop_process(proc)
        await _read_to_eof(proc)
    if ended.code != 0:
        verdict = explain(ended)
        return EngineOutcome(
            failure=verdict.failure,
            message=verdict.message,
            stderr_tail=tail(ended.stderr),
            raw_stdout=ended.stdout[:RAW_STDOUT_CAP],
            duration_ms=elapsed_ms(started),
        )
    return outcome_of(ended.stdout, duration_ms=elapsed_ms(started), stderr=ended.stderr, who=who)


async def _communicate(proc: asyncio.subprocess.Process, stdin: bytes, err: bytearray) -> Exited:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out = bytearray()

    async def feed() -> None:
        assert proc.stdin is not None
        # An engine may exit (or crash) without reading its request: its exit decides.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(stdin)
            await proc.stdin.drain()
            proc.stdin.close()

    async def drain(stream: asyncio.StreamReader, into: bytearray) -> None:
        while chunk := await stream.read(1 << 16):
            into.extend(chunk)

    readers = asyncio.gather(feed(), drain(proc.stdout, out), drain(proc.stderr, err))
    try:
        code = await _exited(proc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(readers), EXIT_GRACE_S)
    finally:
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await readers
    return Exited(
        code, out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace")
    )


async def _read_to_eof(proc: asyncio.subprocess.Process) -> None:
    # With the group dead its pipes reach EOF; reading it lets asyncio close the transports
    # in this loop, not in a finalizer after the loop is closed ("Event loop is closed").
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(stream.read(), EXIT_GRACE_S)
    await asyncio.sleep(0)  # the transports' connection_lost is scheduled with call_soon


async def _exited(proc: asyncio.subprocess.Process) -> int:
    # Not proc.wait(): asyncio wakes it only once every pipe is closed too, and a grandchild
    # holding stdout would keep a finished engine waiting until its deadline.
    while proc.returncode is None:
        await asyncio.sleep(EXIT_POLL_S)
    return proc.returncode
