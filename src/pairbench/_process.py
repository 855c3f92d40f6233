"""Children in their own process group, killed as a group: nothing is left running."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys


def python_argv(argv: list[str]) -> list[str]:
    """``python3``/``python`` as argv[0] means this interpreter (Debian has no ``python``)."""
    if argv and argv[0] in {"python", "python3"}:
        return [sys.executable, *argv[1:]]
    return list(argv)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by ``pid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def stop_process(proc: asyncio.subprocess.Process, grace_s: float = 2.0) -> None:
    """SIGTERM the child's whole group, then SIGKILL after ``grace_s``, and reap it."""
    if proc.returncode is None:
        kill_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(proc.wait(), grace_s)
    # Grandchildren may outlive the leader; the group id is still the leader's pid.
    kill_group(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()
