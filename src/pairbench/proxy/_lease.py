"""``SlotLease``: one run at a time per model endpoint, by an exclusive ``flock``.

A one-slot server shared by two runs would interleave their requests and break both
(seeds, timings, the metrics window). The lock is per open file, so a second lease in the
same process is refused too, and the kernel drops it when its holder dies: a crashed run
never leaves the endpoint locked.
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import re
import socket
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from pairbench._errors import SlotInUse


def endpoint_key(base_url: str) -> str:
    """``address:port`` of a base URL, by the address it resolves to (the default port
    filled in), so every spelling of one server shares one key: ``localhost``,
    ``127.0.0.1``, ``127.0.0.2`` and ``[::1]`` are all ``loopback``; another name is the
    first of its sorted addresses (an IPv4-mapped IPv6 address as IPv4). A name that does
    not resolve keys by its spelling, lowercased.

    >>> endpoint_key("http://127.0.0.1:8080/v1")
    'loopback:8080'
    >>> endpoint_key("http://localhost:8080") == endpoint_key("http://[::1]:8080/v1")
    True
    """
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = (parts.hostname or "localhost").lower()
    return f"{_address(host, port)}:{port}"


def _address(host: str, port: int) -> str:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):  # unresolvable now: the spelling is all there is
        return host
    addresses = set()
    for *_, sockaddr in found:
        ip = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if ip.is_loopback:
            # One machine's loopback is one server whatever the spelling; a server on
            # 127.0.0.1 and another on [::1] at one port would share a lease: safe, if slower.
            return "loopback"
        addresses.add(ip)
    return str(min(addresses, key=lambda a: (a.version, int(a)))) if addresses else host


class SlotLease:
    """An exclusive, non-blocking lease on a model endpoint, held for a run.

    **Usage**::

        with SlotLease("http://127.0.0.1:8080", runs_dir / ".leases"):
            ...   # a second process asking for the same endpoint gets SlotInUse

    The lock file (``slot-loopback-8080.lock``) holds the holder's PID.
    """

    def __init__(self, base_url: str, directory: Path) -> None:
        self.url = base_url
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
                f"the model endpoint {self.url} ({self.endpoint}: every spelling of its "
                f"address shares one lease) is leased by {who} (lock {self.path}). "
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
