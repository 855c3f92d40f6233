"""A loopback recording proxy in front of the model endpoint: the independent count of
provider requests (the runtime's own events may be missing or wrong)."""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pairbench._model import Frozen


class ProviderRequest(Frozen):
    """One chat completion that went through the proxy."""

    sha256: str
    """Of the request body as sent."""
    seed: int | None
    """The ``seed`` the body carried (None: not sent)."""
    temperature: float | None
    """The ``temperature`` the body carried (None: not sent)."""
    status: int
    """The endpoint's HTTP status."""
    prompt_tokens: int | None
    """``usage.prompt_tokens`` of the response (None: not reported)."""
    completion_tokens: int | None
    """``usage.completion_tokens`` of the response (None: not reported)."""


@dataclass
class Recording:
    """The proxy's ``base_url`` and the requests and raw bodies it forwarded."""

    base_url: str
    requests: list[ProviderRequest] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _record(recording: Recording, body: bytes, status: int, answer: bytes) -> None:
    try:
        sent: dict[str, Any] = json.loads(body)
    except ValueError:
        sent = {}
    try:
        usage = json.loads(answer).get("usage") or {}
    except (ValueError, AttributeError):
        usage = {}
    seed, temperature = sent.get("seed"), sent.get("temperature")
    request = ProviderRequest(
        sha256=hashlib.sha256(body).hexdigest(),
        seed=seed if isinstance(seed, int) else None,
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        status=status,
        prompt_tokens=usage.get("prompt_tokens") if isinstance(usage, dict) else None,
        completion_tokens=usage.get("completion_tokens") if isinstance(usage, dict) else None,
    )
    with recording.lock:
        recording.requests.append(request)
        recording.bodies.append(body)


@contextmanager
def recording_proxy(upstream: str) -> Iterator[Recording]:
    """Forward ``127.0.0.1:PORT/<path>`` to ``upstream``'s host until the block ends.

    ``upstream`` is a base URL such as ``http://127.0.0.1:8000/v1``; the proxy's
    ``base_url`` keeps its path, so a client needs no other change.
    """
    target = urllib.parse.urlsplit(upstream)
    recording = Recording(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _forward(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            connection = http.client.HTTPConnection(target.hostname or "127.0.0.1",
                                                    target.port or 80, timeout=300)  # fmt: skip
            try:
                connection.request(method, self.path, body=body or None,
                                   headers={"Content-Type": "application/json"})  # fmt: skip
                response = connection.getresponse()
                status, answer = response.status, response.read()
                kind = response.getheader("Content-Type") or "application/json"
            except OSError as exc:
                status, answer, kind = 502, str(exc).encode(), "text/plain"
            finally:
                connection.close()
            if method == "POST" and self.path.split("?")[0].endswith("/chat/completions"):
                _record(recording, body, status, answer)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def do_GET(self) -> None:
            self._forward("GET")

        def do_POST(self) -> None:
            self._forward("POST")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    recording.base_url = f"http://127.0.0.1:{httpd.server_address[1]}{target.path}"
    thread = threading.Thread(target=httpd.serve_forever, name="recording-proxy", daemon=True)
    thread.start()
    try:
        yield recording
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
