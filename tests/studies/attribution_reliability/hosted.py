"""A hosted engine and a reverse proxy, written as their users would (no pairbench imports).

``serve_engine`` is an http engine: on ``POST /scan`` it opens the request's start URL and
every link on that page that stays on the same origin (plain HTTP, like a crawler), and
answers a completed report naming what it saw. ``serve_proxy`` forwards everything it
receives on one port to one upstream origin, paths unchanged, like a reverse proxy or
tunnel in front of the sites.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urljoin, urlsplit


@dataclass
class Seen:
    """What a server saw: request bodies (engine) or forwarded paths (proxy)."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    fetched: list[tuple[str, int | str]] = field(default_factory=list)
    forwarded: list[str] = field(default_factory=list)


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _fetch(url: str) -> tuple[int | str, str]:
    try:
        with _DIRECT.open(url, timeout=10) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except OSError as exc:
        return str(exc), ""


class _Engine(BaseHTTPRequestHandler):
    seen: Seen

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        request = json.loads(body)
        self.seen.requests.append(request)
        start = request["start_url"]
        status, page = _fetch(start)
        self.seen.fetched.append((start, status))
        for href in re.findall(r'href="([^"]+)"', page)[:3]:
            url = urljoin(start, href)
            if urlsplit(url).netloc == urlsplit(start).netloc:
                self.seen.fetched.append((url, _fetch(url)[0]))
        user = request["personas"][0]["user"]
        report = {
            "status": "completed",
            "observations": [
                {"user": user, "step": i + 1, "page_url": url, "outcome_text": str(code)}
                for i, (url, code) in enumerate(self.seen.fetched)
            ],
        }
        data = json.dumps(report).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Proxy(BaseHTTPRequestHandler):
    seen: Seen
    upstream: tuple[str, int]

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.seen.forwarded.append(self.path)
        connection = http.client.HTTPConnection(*self.upstream, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        connection.request(self.command, self.path, body=body or None, headers=headers)
        answer = connection.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        connection.close()

    do_GET = do_POST = do_HEAD = _forward

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler], host: str) -> Iterator[str]:
    httpd = ThreadingHTTPServer((host, 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@contextmanager
def serve_engine(host: str) -> Iterator[tuple[str, Seen]]:
    """The engine's base URL on ``host`` and what it saw."""
    seen = Seen()
    with _serving(type("Engine", (_Engine,), {"seen": seen}), host) as url:
        yield url, seen


@contextmanager
def serve_proxy(host: str, upstream: tuple[str, int]) -> Iterator[tuple[str, Seen]]:
    """A proxy on ``host`` forwarding to ``upstream`` (host, port), and what it forwarded."""
    seen = Seen()
    handler = type("Proxy", (_Proxy,), {"seen": seen, "upstream": upstream})
    with _serving(handler, host) as url:
        yield url, seen
