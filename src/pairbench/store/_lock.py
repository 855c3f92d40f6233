"""One writer per run: an exclusive ``flock`` on ``<run>/.lock`` for the writer's whole life.

``run``, ``resume`` and ``report`` write a run; two of them at once would start or journal
attempts twice. Each takes :func:`writer_lock` first; a second writer is refused at once
with :class:`~pairbench._errors.RunInUse`, naming the holder. Readers (``verify``,
``view``) take no lock. The kernel drops a ``flock`` when its holder dies, however it dies,
so there is never a stale lock to clean up; the PID and command written into the file are
for the refusal's message only, never for deciding who holds the lock.

**Usage**::

    with writer_lock(Path("runs/r1"), "pairbench resume"):
        ...  # the only writer of runs/r1 until the block ends
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pairbench._clock import now_iso
from pairbench._errors import RunInUse

LOCK_NAME = ".lock"
"""The lock file inside a run folder (a dot file: no reader lists or hashes it)."""


@dataclass
class _Held:
    fd: int
    depth: int = 1


@dataclass
class _Registry:
    """The locks this process holds, by the lock file's (device, inode).

    ``flock`` conflicts between two open files even within one process, so a writer that
    calls another (``run`` writing its report) must find the lock it already holds rather
    than open the file again. The inode, not the path, names it: a new run's folder is
    renamed while its lock is held.
    """

    held: dict[tuple[int, int], _Held] = field(default_factory=dict)
    scopes: list[list[tuple[int, int]]] = field(default_factory=list)
    mutex: threading.Lock = field(default_factory=threading.Lock)


_REGISTRY = _Registry()


def _holder_text(path: Path) -> str:
    """``pid 1234 (pairbench resume)`` from the lock file, or a plain phrase if unreadable."""
    # The holder writes its note just after taking the lock; a refusal landing in between
    # reads an empty file or the last holder's note, so look again for a moment.
    last = "another pairbench process"
    for _ in range(10):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            pid, command = int(data["pid"]), str(data["command"])
        except (OSError, ValueError, KeyError, TypeError):
            time.sleep(0.02)
            continue
        last = f"pid {pid} ({command})"
        if process_alive(pid):
            break
        time.sleep(0.02)  # (or a holder in another PID namespace: its note still says most)
    return last


def process_alive(pid: int) -> bool:
    """Whether a process with this PID exists (here, in this PID namespace)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


class _Busy(Exception):
    """Another process holds the lock."""


def _acquire(run_path: Path, command: str) -> tuple[int, int]:
    lock_file = run_path / LOCK_NAME
    # Not inherited by children (os.open's default): an agent that outlives its runner must
    # not keep the run locked.
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        stat = os.fstat(fd)
        key = (stat.st_dev, stat.st_ino)
        with _REGISTRY.mutex:
            mine = _REGISTRY.held.get(key)
            if mine is not None:
                mine.depth += 1
                os.close(fd)
                return key
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            raise _Busy from None
        record = {"pid": os.getpid(), "command": command, "since": now_iso()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode("utf-8"), 0)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    with _REGISTRY.mutex:
        _REGISTRY.held[key] = _Held(fd)
        if _REGISTRY.scopes:
            # The scope keeps a reference of its own, dropped when the scope ends.
            _REGISTRY.held[key].depth += 1
            _REGISTRY.scopes[-1].append(key)
    return key


def _release(key: tuple[int, int]) -> None:
    with _REGISTRY.mutex:
        mine = _REGISTRY.held[key]
        mine.depth -= 1
        if mine.depth > 0:
            return
        del _REGISTRY.held[key]
    with contextlib.suppress(OSError):
        os.ftruncate(mine.fd, 0)  # the message is for a live holder only
    os.close(mine.fd)  # closing the last descriptor drops the flock


@contextlib.contextmanager
def writer_lock(run_path: Path, command: str) -> Iterator[None]:
    """Be the only writer of the run folder ``run_path`` for the block, or raise ``RunInUse``.

    Never waits: a folder another process writes is refused at once, with the holder's PID
    and ``command`` (e.g. ``"pairbench resume"``) in the message. Re-entrant within one
    process, so a writer may call another writer of the same run.

    **Usage**::

        with writer_lock(Path("runs/r1"), "pairbench report"):
            write_report(...)
    """
    try:
        key = _acquire(run_path, command)
    except _Busy:
        raise RunInUse(
            f"{run_path} is in use by {_holder_text(run_path / LOCK_NAME)}; "
            "wait for it to finish or stop it, then try again"
        ) from None
    try:
        yield
    finally:
        _release(key)


@contextlib.contextmanager
def hold_writer_locks() -> Iterator[None]:
    """Keep every writer lock this process takes inside the block until the block ends.

    A CLI command is one writer from start to exit: ``pairbench run`` takes the new run's
    lock in ``start_run`` and must still hold it while it writes the report afterwards,
    with no moment in between for another process to take it.

    **Usage**::

        with hold_writer_locks():
            outcome = start_run(exp, runs)   # takes the lock
            write_report(outcome.run_dir)    # still holds it
    """
    with _REGISTRY.mutex:
        _REGISTRY.scopes.append([])
    try:
        yield
    finally:
        with _REGISTRY.mutex:
            keys = _REGISTRY.scopes.pop()
        for key in keys:
            _release(key)


@contextlib.contextmanager
def try_writer_lock(run_path: Path, command: str) -> Iterator[bool]:
    """:func:`writer_lock` that yields False, instead of raising, while another process
    holds the lock or once the folder is gone (clearing abandoned folders)."""
    try:
        key = _acquire(run_path, command)
    except (_Busy, FileNotFoundError):
        yield False
        return
    try:
        yield True
    finally:
        _release(key)
