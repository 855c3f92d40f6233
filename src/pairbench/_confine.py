"""An attempt's declared limits, enforced by the operating system on its agent process.

``Confinement.open(limits)`` makes the attempt's control groups (``pairbench._cgroup``) for
memory and process count where the machine offers them; its ``preexec`` (run in the child
before ``exec``) joins them and sets the resource limits the kernel applies to the child and
everything it starts: ``RLIMIT_FSIZE`` always (a write past ``file_size`` gets ``SIGXFSZ``,
or ``EFBIG`` where that is ignored), and, without a group for them, ``RLIMIT_DATA`` for
memory and ``RLIMIT_NPROC`` for processes. ``verdict`` afterwards names the limit reached,
if any, from the kernel's own counters (or, without them, from how the agent died).

Output per stream is not the kernel's: the agent's adapter counts the bytes as it streams
them to the transcript, and stops the attempt when a stream passes its limit.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from pairbench import _cgroup
from pairbench.spec._limits import Limits, format_size

LimitKind = Literal["output_limit", "memory_limit", "disk_limit", "process_limit"]

_MEMORY_WORDS = ("MemoryError", "Cannot allocate memory", "bad_alloc", "out of memory")
_FORK_WORDS = ("Resource temporarily unavailable", "can't start new thread", "fork failed")
_FILE_WORDS = (os.strerror(errno.EFBIG),)
"""What a refused write leaves on stderr when the writer ignores SIGXFSZ, as Python does:
a sparse write far past the limit is refused whole, so no file at the limit shows it."""


class Mechanisms(NamedTuple):
    """How each limit is enforced on this machine, in words (``pairbench check``)."""

    output: str
    memory: str
    processes: str
    file_size: str


def mechanisms() -> Mechanisms:
    """What enforces each limit here: a cgroup where one is writable, else an rlimit."""
    groups = _cgroup.available()
    root = os.geteuid() == 0

    def group(name: str) -> str | None:
        controller = groups.get(name)
        if controller is None:
            return None
        return f"cgroup v{controller.version} {controller.limit_file}"

    nproc = "RLIMIT_NPROC" + (" (not enforced: Linux ignores it for root)" if root else "")
    return Mechanisms(
        output="counted by the runner as it streams stdout and stderr",
        memory=group("memory") or "RLIMIT_DATA per process",
        processes=group("pids") or nproc,
        file_size="RLIMIT_FSIZE",
    )


class LimitReached(Exception):
    """Raised by an adapter whose agent reached a declared limit: the attempt's outcome is
    ``kind`` (an agent failure, like ``timeout``), with ``str(exc)`` as its reason."""

    def __init__(self, kind: LimitKind, reason: str) -> None:
        super().__init__(reason)
        self.kind: LimitKind = kind


@dataclass
class Confinement:
    """One attempt's OS limits. **Usage**::

    confinement = Confinement.open(ctx.limits)
    try:
        proc = await spawn(*argv, env=env, preexec=confinement.preexec)
        ...
        kind = confinement.verdict(code, stderr_tail, folders=[workdir])
    finally:
        confinement.close()      # kills what is left in its groups, removes them
    """

    limits: Limits
    group: _cgroup.AttemptGroup | None

    @classmethod
    def open(cls, limits: Limits) -> Confinement:
        group = _cgroup.AttemptGroup.make(
            {"pids": str(limits.processes), "memory": str(limits.memory)}
        )
        return cls(limits, group)

    def in_group(self, name: str) -> bool:
        return self.group is not None and name in self.group.folders

    def preexec(self) -> None:
        """In the child, before ``exec``: join the groups, set the rlimits."""
        if self.group is not None:
            self.group.join()
        _set(resource.RLIMIT_FSIZE, self.limits.file_size)
        if not self.in_group("memory"):
            _set(resource.RLIMIT_DATA, self.limits.memory)
        if not self.in_group("pids"):
            _set(resource.RLIMIT_NPROC, self.limits.processes)
        # subprocess restores SIGXFSZ to its default before exec; say so, in case a caller
        # does not: a write past the limit then ends the writer.
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)

    def watch(self) -> _cgroup.Notifier | None:
        """An inotify descriptor that turns readable when a group's counter changes."""
        if self.group is None:
            return None
        try:
            return _cgroup.Notifier(self.group.events_paths())
        except OSError:
            return None

    def verdict(
        self, code: int | None, stderr_tail: Iterable[str], folders: Iterable[Path] = ()
    ) -> LimitReached | None:
        """The limit the attempt reached, if any: the kernel's counters first, then the
        signal that ended the agent, then a file at the size limit, then (only where no
        group counted) the words a failed allocation or fork leaves on stderr."""
        fired = self.group.fired() if self.group is not None else set()
        limits = self.limits
        memory = format_size(limits.memory)
        if "memory" in fired:
            return LimitReached("memory_limit", f"reached the {memory} memory limit")
        if "pids" in fired:
            return LimitReached("process_limit", f"reached the {limits.processes} process limit")
        big = _file_at(limits.file_size, folders)
        if code == -signal.SIGXFSZ or big is not None:
            where = f" ({big!r})" if big else ""
            return LimitReached(
                "disk_limit", f"reached the {format_size(limits.file_size)} file size limit{where}"
            )
        if code in (0, None):
            return None
        tail = "\n".join(stderr_tail)
        if not self.in_group("memory") and any(w in tail for w in _MEMORY_WORDS):
            return LimitReached(
                "memory_limit",
                f"reached the {memory} memory limit (RLIMIT_DATA)",
            )
        if any(w in tail for w in _FILE_WORDS):
            return LimitReached(
                "disk_limit",
                f"reached the {format_size(limits.file_size)} file size limit (a write past it "
                "was refused)",
            )
        if not self.in_group("pids") and any(w in tail for w in _FORK_WORDS):
            return LimitReached(
                "process_limit", f"reached the {limits.processes} process limit (RLIMIT_NPROC)"
            )
        return None

    def close(self) -> None:
        if self.group is not None:
            self.group.remove()


def _set(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    # An unprivileged runner cannot raise a hard limit: never ask for more than it has.
    cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (cap, hard))


def _file_at(size: int, folders: Iterable[Path]) -> str | None:
    """The first regular file under ``folders`` whose size reached ``size`` (a write was cut
    there), without following links; None if there is none. ``walk_tree``, not ``os.walk``:
    an agent's 1,000 nested folders must not raise ``RecursionError`` here."""
    from pairbench.store._walk import walk_tree

    for folder in folders:
        for entry in walk_tree(folder):
            if entry.kind == "file" and entry.size >= size:
                return entry.rel
    return None
