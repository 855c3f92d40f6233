"""Serving for real: uvicorn on 127.0.0.1, over a socket, in a background thread."""

from __future__ import annotations

import socket

import httpx
import pytest

from helpers.view_runs import ViewRuns
from pairbench._errors import PairbenchError
from pairbench.view import serving
from pairbench.view._serve import bind


def test_serving_listens_on_loopback_and_checks_the_host(view_runs: ViewRuns) -> None:
    with serving(view_runs.runs) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        page = httpx.get(url)
        assert page.status_code == 200 and view_runs.live.run_id in page.text
        assert httpx.get(f"http://localhost:{port}/").status_code == 200
        # The same socket, asked for by another name: a rebinding attacker's page.
        evil = httpx.get(url, headers={"host": f"evil.example:{port}"})
        assert evil.status_code == 400
    with pytest.raises(httpx.ConnectError):  # stopped, and its port let go
        httpx.get(url, timeout=2)


def test_a_taken_port_is_one_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(
            PairbenchError, match=rf"127\.0\.0\.1:{port} is in use\. Fix: .*--port 0"
        ):
            bind(port)


def test_port_zero_picks_a_free_port() -> None:
    with bind(0) as sock:
        assert sock.getsockname()[0] == "127.0.0.1" and sock.getsockname()[1] > 0
