"""One case's site for one trial: uvicorn in a daemon thread, two ports on one address.

The main origin serves ``/v/<slug>/...``; the second origin (``localhost:<port2>``) serves
the builder's ``other_routes`` at the same paths. Both bind 127.0.0.1 unless a
``SiteBinding`` says another address and the public origins engines reach them by
(``_binding``); the slug is an HMAC of the trial seed under the trial's key (``_key``).
Every other path is a plain 404. Every response carries ``X-Robots-Tag: noindex,
nofollow``. The audit log (path, status, user agent, latency, arrival time, fetch
destination and the words the response showed) is kept in memory for the session's
evidence of the visit, never shown to the engine.

**Usage**::

    with serve_case("P01", seed=7) as site:
        site.start_url        # http://127.0.0.1:PORT/v/<slug>
        site.audit            # [SiteHit(...), ...]

    with serve_case("P01", seed=7, key=trial_key(shared), binding=binding) as site:
        site.start_url        # <public_url>/v/<slug>; site.local_origins: where it listens
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from pairbench.studies.attribution_reliability.site._binding import SiteBinding
from pairbench.studies.attribution_reliability.site._hub import hosted
from pairbench.studies.attribution_reliability.site._key import trial_key
from pairbench.studies.attribution_reliability.site._kit import (
    NOINDEX,
    CaseSite,
    SiteBuilder,
    SiteContext,
)
from pairbench.studies.attribution_reliability.site._listen import bind, origin, serving
from pairbench.studies.attribution_reliability.site._visible import visible_text


def slug_for(seed: int, key: bytes, salt: str = "") -> str:
    """26 lower-case base32 characters (130 bits): the trial seed (and ``salt``) under the
    trial's key (differ across trials; unguessable without the key)."""
    message = f"pairbench.attribution.slug/{seed}/{salt}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:26]


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
    """What engines are given: the advertised main origin + ``/v/<slug>``."""
    other_origin: str
    """The advertised second origin."""
    slug: str
    audit: list[SiteHit] = field(default_factory=list)
    local_origins: tuple[str, str] = ("", "")
    """Where the two origins listen (``http://<host>:<port>``): a proxy's targets."""


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


@contextmanager
def serve_site(
    builder: SiteBuilder,
    seed: int,
    *,
    key: bytes | None = None,
    binding: SiteBinding | None = None,
    salt: str = "",
) -> Iterator[RunningSite]:
    """Serve ``builder``'s site for the trial ``seed`` until the block ends.

    ``key`` (default: a fresh one) and ``salt`` (the arm: two arms of a trial may be served
    at once) draw the slug; ``binding`` (default: 127.0.0.1, no public URL) says where it
    listens and what URLs engines are given."""
    binding = binding or SiteBinding()
    slug = slug_for(seed, key if key is not None else trial_key(None), salt)
    with ExitStack() as stack:
        if binding.port is not None and binding.other_port is not None:
            sockets = []
            ports = binding.port, binding.other_port
        else:
            sockets = [stack.enter_context(closing(bind(binding.host))) for _ in range(2)]
            ports = sockets[0].getsockname()[1], sockets[1].getsockname()[1]
        main_origin, other_origin = binding.origins(*ports)
        ctx = SiteContext(slug=slug, base=f"/v/{slug}", other_origin=other_origin, seed=seed)
        running = RunningSite(
            start_url=f"{main_origin}/v/{slug}",
            other_origin=ctx.other_origin,
            slug=slug,
            local_origins=(origin(binding.host, ports[0]), origin(binding.host, ports[1])),
        )
        app = _App(builder(ctx), ctx, ports[0], running.audit)
        if sockets:
            stack.enter_context(serving(app, sockets))
        else:
            stack.enter_context(hosted(binding.host, *ports, slug, app))
        yield running


@contextmanager
def serve_case(
    case_fixture: str,
    seed: int,
    *,
    key: bytes | None = None,
    binding: SiteBinding | None = None,
    salt: str = "",
) -> Iterator[RunningSite]:
    """Serve the site named ``case_fixture`` (a key of ``SITES``) for the trial ``seed``
    (``key``, ``binding`` and ``salt`` as for ``serve_site``)."""
    from pairbench.studies.attribution_reliability.site import SITES

    try:
        builder = SITES[case_fixture]
    except KeyError:
        raise KeyError(f"no site named {case_fixture!r}; known: {sorted(SITES)}") from None
    with serve_site(builder, seed, key=key, binding=binding, salt=salt) as running:
        yield running


__all__ = [
    "Response",
    "RunningSite",
    "SiteBinding",
    "SiteHit",
    "serve_case",
    "serve_site",
    "slug_for",
]
