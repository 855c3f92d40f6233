"""Sockets and a uvicorn server in a daemon thread: how every case site listens."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp

START_TIMEOUT_S = 20.0


def bind(host: str, port: int = 0) -> socket.socket:
    """A TCP socket bound to ``host:port`` (``0``: a free port), IPv6 for an IPv6 address."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def origin(host: str, port: int) -> str:
    """``http://host:port``, an IPv6 address in brackets.

    >>> origin("::1", 80), origin("127.0.0.2", 8001)
    ('http://[::1]:80', 'http://127.0.0.2:8001')
    """
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@contextmanager
def serving(app: ASGIApp, sockets: list[socket.socket]) -> Iterator[None]:
    """Serve ``app`` on ``sockets`` until the block ends (then close them)."""
    config = uvicorn.Config(
        app, log_level="critical", access_log=False, timeout_graceful_shutdown=1, lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the case's site did not start")
            time.sleep(0.01)
        yield
    finally:
        server.should_exit = True
        server.force_exit = True
        thread.join(timeout=10)
        for sock in sockets:
            sock.close()
