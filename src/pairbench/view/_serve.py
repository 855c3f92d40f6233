"""Serving the view: uvicorn on 127.0.0.1 only, on a socket bound before the app is made.

The socket is bound first so that ``--port 0`` (any free port) still gives the app the
port its Host check must accept, and so that the printed URL answers at once.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import uvicorn

from pairbench._errors import PairbenchError
from pairbench.view._app import DEFAULT_PORT, create_app
from pairbench.view._paths import RunsRoot

HOST = "127.0.0.1"
"""The only address the view listens on: it shows agent output and run files to whoever
can reach it, so never another machine."""
_STARTUP_S = 30.0
"""How long ``serving`` waits for uvicorn to start, or to stop (it takes milliseconds)."""


def bind(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` (0: a free port the OS picks).

    Raises ``PairbenchError`` with the fix when the port is taken or not allowed.
    """
    if not 0 <= port <= 65535:
        raise PairbenchError(f"--port {port}: choose 0 (any free port) to 65535")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # Lets a restarted view take its port back while old connections linger in
        # TIME_WAIT; on Linux it never lets two servers listen on one port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PairbenchError(
                f"{HOST}:{port} is in use. Fix: stop what listens there, or pass another "
                "--port (--port 0 picks a free one)"
            ) from None
        raise PairbenchError(
            f"cannot listen on {HOST}:{port} ({exc.strerror or exc}). Fix: pass --port 0 "
            "to pick a free port"
        ) from None
    return sock


def _server(runs_dir: Path, sock: socket.socket) -> uvicorn.Server:
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        create_app(runs_dir, port=port),
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
    )
    return uvicorn.Server(config)


def url_of(sock: socket.socket) -> str:
    """``http://127.0.0.1:PORT/`` of a socket from :func:`bind`."""
    return f"http://{HOST}:{sock.getsockname()[1]}/"


def serve(
    runs_dir: Path = Path("runs"),
    port: int = DEFAULT_PORT,
    *,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the view of ``runs_dir`` on 127.0.0.1:``port`` until interrupted (Ctrl-C).

    ``on_ready`` gets the URL once the port is bound (``pairbench view`` prints it).
    Raises ``RunDirError`` for a missing ``runs_dir`` and ``PairbenchError`` for a port
    that is taken, before anything listens.

    **Usage**::

        serve(Path("runs"), 8765, on_ready=print)   # http://127.0.0.1:8765/
        serve(Path("runs"), 0)                      # any free port
    """
    RunsRoot.open(runs_dir)  # a missing folder is an error before a port is taken
    with bind(port) as sock:
        server = _server(runs_dir, sock)
        if on_ready is not None:
            on_ready(url_of(sock))
        server.run(sockets=[sock])


@contextlib.contextmanager
def serving(runs_dir: Path, port: int = 0) -> Iterator[str]:
    """Serve the view in a background thread for the block; yield its URL.

    For tests and notebooks: the server stops, and its port is released, when the block
    ends.

    **Usage**::

        with serving(Path("runs")) as url:
            httpx.get(url)
    """
    RunsRoot.open(runs_dir)
    with bind(port) as sock:
        server = _server(runs_dir, sock)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="pairbench-view", daemon=True
        )
        thread.start()
        # uvicorn sets `started` from its loop: poll for it rather than guess a delay.
        deadline = time.monotonic() + _STARTUP_S
        while thread.is_alive() and not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        if not server.started:
            server.should_exit = True
            thread.join(_STARTUP_S)
            raise PairbenchError(f"the view did not start on {url_of(sock)}")
        try:
            yield url_of(sock)
        finally:
            server.should_exit = True
            thread.join(_STARTUP_S)
