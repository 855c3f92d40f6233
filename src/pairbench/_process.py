"""Children in their own process group, killed as a group: nothing is left running.

Every child runs in its own session (``start_new_session=True``) so that Ctrl-C does not
reach it before the runner can record the attempt, and so that killing its process group
also takes its grandchildren. ``die_with_parent`` makes the kernel kill a child whose
runner died without cleaning up (SIGKILL, OOM).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

_PYTHONS = frozenset({"python", "python3"})
_PR_SET_PDEATHSIG = 1


def resolve_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with a leading ``python``/``python3`` replaced by this interpreter.

    Debian has no ``python``, and a scrubbed ``PATH`` could find another interpreter.

    **Usage**::

        resolve_argv(["python3", "-m", "pkg"])   # -> [sys.executable, "-m", "pkg"]
    """
    out = list(argv)
    if out and out[0] in _PYTHONS:
        out[0] = sys.executable
    return out


def die_with_parent() -> None:
    """``preexec_fn``: ask Linux to SIGKILL this child when the process that started it dies."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by ``pid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still exists."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def terminate_group(proc: subprocess.Popen[bytes], grace_s: float = 3.0) -> None:
    """SIGTERM the child's whole group, then SIGKILL it after ``grace_s``; reap the child."""
    if proc.poll() is None:
        kill_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    # Grandchildren may outlive a leader that exited on SIGTERM: kill what is left.
    kill_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):  # only an unkillable (D state) child
        proc.wait(timeout=grace_s)


async def stop_process(proc: asyncio.subprocess.Process, grace_s: float = 2.0) -> None:
    """The asyncio twin of ``terminate_group``."""
    if proc.returncode is None:
        kill_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(proc.wait(), grace_s)
    kill_group(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()
