"""``SlotLease``: one run at a time per model endpoint, by an exclusive ``flock``.

A one-slot server shared by two runs would interleave their requests and break both
(seeds, timings, the metrics window). The lock is per open file, so a second lease in the
same process is refused too, and the kernel drops it when its holder dies: a crashed run
never leaves the endpoint locked.
"""

from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from pairbench._errors import SlotInUse


def endpoint_key(base_url: str) -> str:
    """``host:port`` of a base URL (the default port filled in).

    >>> endpoint_key("http://127.0.0.1:8080/v1")
    '127.0.0.1:8080'
    """
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname or 'localhost'}:{port}"


class SlotLease:
    """An exclusive, non-blocking lease on a model endpoint, held for a run.

    **Usage**::

        with SlotLease("http://127.0.0.1:8080", runs_dir / ".leases"):
            ...   # a second process asking for the same endpoint gets SlotInUse

    The lock file (``slot-127.0.0.1-8080.lock``) holds the holder's PID.
    """

    def __init__(self, base_url: str, directory: Path) -> None:
        self.endpoint = endpoint_key(base_url)
        safe = re.sub(r"[^A-Za-z0-9.-]", "-", self.endpoint)
        self.path = directory / f"slot-{safe}.lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> SlotLease:
        """Take the lease now or raise ``SlotInUse`` naming the holder's PID."""
        if self._fd is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"pid {holder}" if holder else "a process that has not written its pid yet"
            raise SlotInUse(
                f"the model endpoint {self.endpoint} is leased by {who} (lock {self.path}). "
                "Fix: wait for that run to finish; a one-slot server serves one run at a time"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the lease up (idempotent); the file stays, emptied, for the next holder."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the only descriptor releases the flock

    def __enter__(self) -> SlotLease:
        return self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    return int(text) if text.isdigit() else None
