"""The run's watchdog: a process that outlives the runner and then kills what the run left.

A child's die-with-parent signal reaches only that child, and a subreaper inside the runner
dies with the runner, so grandchildren (a shell's ``sleep &``, a ``setsid`` daemon, a
browser's helpers) of a SIGKILLed runner used to run on. The runner starts this watchdog
once per run or resume, in its own session, with a pipe on its stdin, and tells it over
that pipe which process groups it started (``+PGID`` / ``-PGID`` lines). Every child also
carries the run's random token in ``PAIRBENCH_RUN_TOKEN``; the environment is inherited by
grandchildren, even those that start their own session. When the pipe reaches EOF (the
runner finished, or died: the kernel closes its end either way) the watchdog SIGKILLs each
registered group and every process of this user whose environment holds the token,
rescanning ``/proc`` until a scan finds none, since a process may fork while being killed.
It never signals itself, its parent, or the runner's process group.

What still escapes: a grandchild that both leaves its group and scrubs its environment.

This file is the watchdog only and imports little of the standard library, so it starts
as ``python -I -S _supervisor.py TOKEN RUNNER_PID`` in about 40 ms without importing
pairbench. The runner's end is ``pairbench._process.Supervisor``.

**Usage**::

    python -I -S src/pairbench/_supervisor.py TOKEN RUNNER_PID  < pipe   # +PGID / -PGID lines
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterable

ENV_RUN_TOKEN = "PAIRBENCH_RUN_TOKEN"
"""Names the run (one token per run or resume invocation) in every child's environment."""

_ROUND_SLEEP_S = 0.01
_MAX_SWEEP_S = 5.0
"""A process in uninterruptible sleep cannot die: stop rescanning after this long."""


def carriers(token: str, groups: Iterable[int] = (), protect: Iterable[int] = ()) -> list[int]:
    """This user's live processes that hold ``token`` as the run token or are in ``groups``.

    Zombies are never counted: they are dead, and only their parent can remove them.

    **Usage**::

        carriers(supervisor.token)   # [] once the run is over
    """
    needle = f"\0{ENV_RUN_TOKEN}={token}\0".encode()
    wanted = set(groups)
    skip = set(protect)
    uid = os.getuid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in skip:
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue  # root could read every user's environment: kill only our own
            with open(f"/proc/{name}/stat", "rb") as handle:
                # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
                state, _, pgrp = handle.read().rpartition(b")")[2].split(maxsplit=3)[:3]
            if state == b"Z":
                continue
            if int(pgrp) not in wanted:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    if needle not in b"\0" + handle.read() + b"\0":
                        continue
        except (OSError, ValueError):  # gone, or not ours
            continue
        found.append(int(name))
    return found


def sweep(token: str, groups: Iterable[int], protect: Iterable[int]) -> int:
    """SIGKILL the members of ``groups`` and every carrier of ``token`` until none is left.

    Returns how many were killed. Never signals a pid in ``protect``, and never takes the
    group of one of them as a registered group (a carrier of the token in it still dies).
    """
    keep = set(protect)
    keep_groups = set()
    for pid in keep:
        with contextlib.suppress(OSError):
            keep_groups.add(os.getpgid(pid))
    wanted = {g for g in groups if g > 1} - keep_groups - keep
    killed = 0
    deadline = time.monotonic() + _MAX_SWEEP_S
    while True:
        found = carriers(token, wanted, keep)
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed += len(found)
        if not found or time.monotonic() > deadline:
            return killed
        time.sleep(_ROUND_SLEEP_S)


def main(argv: list[str]) -> int:
    """The watchdog: read ``+PGID``/``-PGID`` lines from stdin; at EOF, sweep the run."""
    token, runner = argv[1], int(argv[2])
    # Its own session keeps Ctrl-C and a closing terminal away; be sure of it anyway.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    groups: set[int] = set()
    rest = b""
    while chunk := os.read(0, 65536):
        *lines, rest = (rest + chunk).split(b"\n")
        for line in lines:
            if line[:1] == b"+":
                groups.add(int(line[1:]))
            elif line[:1] == b"-":
                groups.discard(int(line[1:]))
    parent = os.getppid()  # the runner while it lives; init or a subreaper once it died
    protect = {os.getpid(), parent, 1}
    if parent == runner:
        protect.add(runner)  # library use: the runner is the caller's process (pytest)
    sweep(token, groups, protect)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
