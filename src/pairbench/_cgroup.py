"""Per-attempt control groups: the kernel counts and caps an agent's processes and memory.

Which kind the machine offers is found once (``available``): cgroup v2 (one folder with
``pids.max`` and ``memory.max``) where this process's cgroup may have children with those
controllers, else cgroup v1 (a ``pids`` and a ``memory`` hierarchy, each its own folder),
else none. Each attempt gets its own child group(s) under this process's own; the agent
joins them in its ``preexec_fn`` (before ``exec``), so everything it starts is counted,
including processes that left its process group. Whether a limit fired is read from the
kernel's own counters (``pids.events``: ``max``; ``memory.events`` or
``memory.oom_control``: ``oom_kill``). Under cgroup v2 a change of ``pids.events`` or
``memory.events`` is notified (inotify), so the attempt is stopped at once; cgroup v1 does
not notify, so the adapter reads the counters when the agent writes to stderr (a failed
fork says so there) and when it exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

_ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()


@dataclass(frozen=True)
class Controller:
    """One controller's place and file names: ``pids`` or ``memory``, v1 or v2."""

    name: str
    base: Path
    """The folder attempts' groups are made in (this process's own group)."""
    version: int
    limit_file: str
    events_file: str
    event_key: str
    """The line of ``events_file`` that counts the limit firing."""


def _own_paths() -> dict[str, str]:
    """This process's group per controller (``""`` for v2) from ``/proc/self/cgroup``."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            for name in names.split(",") if names else [""]:
                out[name] = path
    return out


def _probe(base: Path, limit_file: str) -> bool:
    """Whether a child group can be made under ``base`` and its limit file written."""
    probe = base / f"pairbench-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        (probe / limit_file).write_text("max\n" if limit_file.endswith(".max") else "-1\n")
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _v2(paths: dict[str, str]) -> list[Controller]:
    for mount in (_ROOT, _ROOT / "unified"):
        base = mount / paths.get("", "/").lstrip("/")
        try:
            offered = (base / "cgroup.subtree_control").read_text().split()
        except OSError:
            continue
        if not {"pids", "memory"} <= set(offered) or not _probe(base, "pids.max"):
            continue
        return [
            Controller("pids", base, 2, "pids.max", "pids.events", "max"),
            Controller("memory", base, 2, "memory.max", "memory.events", "oom_kill"),
        ]
    return []


def _v1(paths: dict[str, str]) -> list[Controller]:
    found = []
    for name, limit, events, key in (
        ("pids", "pids.max", "pids.events", "max"),
        ("memory", "memory.limit_in_bytes", "memory.oom_control", "oom_kill"),
    ):
        if name not in paths:
            continue
        base = _ROOT / name / paths[name].lstrip("/")
        if not base.is_dir():
            base = _ROOT / name  # a container's view may not show its own path
        if _probe(base, limit):
            found.append(Controller(name, base, 1, limit, events, key))
    return found


@functools.cache
def available() -> dict[str, Controller]:
    """The controllers attempts can use, by name (``pids``, ``memory``); empty if none."""
    if os.environ.get("PAIRBENCH_NO_CGROUP") == "1":  # to exercise the rlimit fallback
        return {}
    paths = _own_paths()
    found = _v2(paths) or _v1(paths)
    return {c.name: c for c in found}


class AttemptGroup:
    """One attempt's group(s): made with their limits, joined by the agent, read, removed.

    **Usage**::

        group = AttemptGroup.make({"pids": "1024", "memory": str(8 << 30)})
        spawn(..., preexec=group.join)        # in the child, before exec
        group.fired()                         # {"pids"} if pids.max was reached
        group.remove()                        # kills what is left in it, removes it
    """

    def __init__(self, folders: dict[str, tuple[Controller, Path]]) -> None:
        self.folders = folders
        # Opened here, not in the child: a preexec_fn should not touch the file system more
        # than it must, and an fd keeps the path valid.
        self._procs = [os.open(p / "cgroup.procs", os.O_WRONLY) for _, p in folders.values()]

    @classmethod
    def make(cls, limits: dict[str, str]) -> AttemptGroup | None:
        """Groups with ``limits`` (controller -> value for its limit file); None when the
        machine offers none of them."""
        offered = available()
        folders: dict[str, tuple[Controller, Path]] = {}
        name = f"pairbench-{os.getpid()}-{next(_counter)}"
        try:
            for key, value in limits.items():
                controller = offered.get(key)
                if controller is None:
                    continue
                folder = controller.base / name
                if not any(f == folder for _, f in folders.values()):
                    folder.mkdir()
                (folder / controller.limit_file).write_text(f"{value}\n")
                if controller.name == "memory":
                    _no_swap(controller, folder)
                folders[key] = (controller, folder)
        except OSError:
            _remove_all([f for _, f in folders.values()])
            return None
        return cls(folders) if folders else None

    def join(self) -> None:
        """``preexec_fn``: move the calling (child) process into every group."""
        for fd in self._procs:
            os.write(fd, b"0")

    def events_paths(self) -> list[Path]:
        """The counter files whose change means a limit fired."""
        return [f / c.events_file for c, f in self.folders.values()]

    def fired(self) -> set[str]:
        """The controllers whose limit was reached (their kernel counter is above 0)."""
        out = set()
        for key, (controller, folder) in self.folders.items():
            try:
                text = (folder / controller.events_file).read_text()
            except OSError:
                continue
            for line in text.splitlines():
                name, _, value = line.partition(" ")
                if name == controller.event_key and value.strip() not in ("", "0"):
                    out.add(key)
        return out

    def kill(self) -> None:
        """SIGKILL every process in the groups (the groups stay until ``remove``)."""
        for _, folder in self.folders.values():
            for pid in _pids(folder):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill every process still in the groups (also those that left the agent's process
        group), then remove the groups."""
        for fd in self._procs:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._procs = []
        folders = list(dict.fromkeys(f for _, f in self.folders.values()))
        _remove_all(folders)


def _no_swap(controller: Controller, folder: Path) -> None:
    # Memory past the limit must not go to swap instead of ending the attempt.
    name = "memory.swap.max" if controller.version == 2 else "memory.memsw.limit_in_bytes"
    value = "0" if controller.version == 2 else (folder / controller.limit_file).read_text()
    with contextlib.suppress(OSError):
        (folder / name).write_text(value)


def _remove_all(folders: list[Path]) -> None:
    deadline = time.monotonic() + 5.0
    for folder in folders:
        while True:
            for pid in _pids(folder):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            try:
                folder.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                # Killed processes leave the group once they have exited: a few ms.
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)


def _pids(folder: Path) -> list[int]:
    try:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


_IN_MODIFY = 0x2
_IN_NONBLOCK_CLOEXEC = os.O_NONBLOCK | os.O_CLOEXEC


class Notifier:
    """An inotify descriptor on a group's counter files: readable once one changes (the
    kernel notifies on ``pids.events`` and ``memory.events``), for ``loop.add_reader``."""

    def __init__(self, paths: list[Path]) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd: int = libc.inotify_init1(_IN_NONBLOCK_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        for path in paths:
            libc.inotify_add_watch(self.fd, os.fsencode(path), _IN_MODIFY)

    def drain(self) -> None:
        """Read the pending notifications (so the descriptor is quiet until the next)."""
        with contextlib.suppress(OSError):
            os.read(self.fd, 4096)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
