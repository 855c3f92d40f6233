"""One case's site for one trial: uvicorn in a daemon thread on 127.0.0.1, two ports.

The main origin serves ``/v/<slug>/...``; the second origin (``localhost:<port2>``) serves
the builder's ``other_routes`` at the same paths. Every other path is a plain 404. Every
response carries ``X-Robots-Tag: noindex, nofollow``. The audit log (path, status, user
agent, latency, arrival time, fetch destination and the words the response showed) is kept
in memory for the session's evidence of the visit, never shown to the engine.

**Usage**::

    with serve_case("P01", seed=7) as site:
        site.start_url        # http://127.0.0.1:PORT/v/<slug>
        site.audit            # [SiteHit(...), ...]
"""

from __future__ import annotations

import base64
import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from pairbench.studies.attribution_reliability.site._kit import (
    NOINDEX,
    CaseSite,
    SiteBuilder,
    SiteContext,
)
from pairbench.studies.attribution_reliability.site._visible import visible_text

_START_TIMEOUT_S = 20.0


def slug_for(seed: int) -> str:
    """16 lower-case base32 characters drawn from the trial seed (differ across trials)."""
    digest = hashlib.sha256(f"pairbench.attribution.slug/{seed}".encode()).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:16]


@dataclass(frozen=True)
class SiteHit:
    origin: str
    """``main`` or ``other``."""
    method: str
    path: str
    status: int
    user_agent: str
    ms: float
    at: float = 0.0
    """``time.monotonic()`` when the request arrived: hits that arrived after the engine was
    started are the engine's (the preflight and a package's recording finish before)."""
    dest: str = ""
    """The browser's ``Sec-Fetch-Dest`` (``document``, ``empty``, ``script``...); ``""`` from
    a client that sends none."""
    content_type: str = ""
    text: str = ""
    """The words the response showed (``site._visible.visible_text``)."""


@dataclass
class RunningSite:
    start_url: str
    other_origin: str
    slug: str
    audit: list[SiteHit] = field(default_factory=list)


class _App:
    """The ASGI app: dispatches by origin (local port) and path, and records every hit."""

    def __init__(self, site: CaseSite, ctx: SiteContext, main_port: int, hits: list[SiteHit]):
        self.site, self.ctx, self.main_port, self.hits = site, ctx, main_port, hits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        started = time.monotonic()
        request = Request(scope, receive)
        # The request line is read before the handler runs: a hit's arrival is its start.
        main = scope.get("server", (None, self.main_port))[1] == self.main_port
        response = await self._answer(request, main)
        response.headers["X-Robots-Tag"] = NOINDEX
        content_type = response.headers.get("content-type", "")
        await response(scope, receive, send)
        self.hits.append(
            SiteHit(
                origin="main" if main else "other",
                method=request.method,
                path=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
                status=response.status_code,
                user_agent=request.headers.get("user-agent", ""),
                ms=(time.monotonic() - started) * 1000,
                at=started,
                dest=request.headers.get("sec-fetch-dest", ""),
                content_type=content_type,
                # A streamed response has no body to read: it shows no words here.
                text=visible_text(getattr(response, "body", b"") or b"", content_type),
            )
        )

    async def _answer(self, request: Request, main: bool) -> Response:
        path = request.url.path
        if not path.startswith(self.ctx.base):
            return PlainTextResponse("Not Found", status_code=404)
        rel = path[len(self.ctx.base) :]
        if rel == "/":
            rel = ""
        routes = self.site.routes if main else self.site.other_routes
        handler = routes.get(rel) if request.method in ("GET", "HEAD") else None
        handler = handler or routes.get(f"{request.method} {rel}")
        if handler is None:
            return PlainTextResponse("Not Found", status_code=404)
        ua = request.headers.get("user-agent", "")
        request.state.automated = self.site.automation_gate and (
            "HeadlessChrome" in ua or request.cookies.get("sid2") == "1"
        )
        return await handler(request)


def _bind() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def serve_site(builder: SiteBuilder, seed: int) -> Iterator[RunningSite]:
    """Serve ``builder``'s site for the trial ``seed`` until the block ends."""
    main_sock, other_sock = _bind(), _bind()
    main_port, other_port = main_sock.getsockname()[1], other_sock.getsockname()[1]
    slug = slug_for(seed)
    ctx = SiteContext(
        slug=slug, base=f"/v/{slug}", other_origin=f"http://localhost:{other_port}", seed=seed
    )
    running = RunningSite(
        start_url=f"http://127.0.0.1:{main_port}/v/{slug}",
        other_origin=ctx.other_origin,
        slug=slug,
    )
    app = _App(builder(ctx), ctx, main_port, running.audit)
    config = uvicorn.Config(
        app, log_level="critical", access_log=False, timeout_graceful_shutdown=1, lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [main_sock, other_sock]}, daemon=True
    )
    thread.start()
    deadline = time.monotonic() + _START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the case's site did not start")
        time.sleep(0.01)
    try:
        yield running
    finally:
        server.should_exit = True
        server.force_exit = True
        thread.join(timeout=10)
        main_sock.close()
        other_sock.close()


@contextmanager
def serve_case(case_fixture: str, seed: int) -> Iterator[RunningSite]:
    """Serve the site named ``case_fixture`` (a key of ``SITES``) for the trial ``seed``."""
    from pairbench.studies.attribution_reliability.site import SITES

    try:
        builder = SITES[case_fixture]
    except KeyError:
        raise KeyError(f"no site named {case_fixture!r}; known: {sorted(SITES)}") from None
    with serve_site(builder, seed) as running:
        yield running


__all__ = ["Response", "RunningSite", "SiteHit", "serve_case", "serve_site", "slug_for"]
