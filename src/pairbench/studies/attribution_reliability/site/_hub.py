"""Fixed ports for the case sites: one listener pair that routes ``/v/<slug>`` to its trial.

Each trial's site normally listens on two free ports of its own, which a reverse proxy or
tunnel configured once cannot know. With ``sites: {port, other_port}`` every site of the
process is served on those two ports instead: a hub keeps the running sites by slug and
hands each request to the one its path names (anything else is a plain 404, as on a
site). The hub starts with the first site and stops with the last. One process only: two
runner processes (``--executor ray``) cannot both bind the ports.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from pairbench.studies.attribution_reliability.site._kit import NOINDEX
from pairbench.studies.attribution_reliability.site._listen import bind, serving


class _Hub:
    def __init__(self) -> None:
        self.sites: dict[str, ASGIApp] = {}
        self.stack = ExitStack()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].removeprefix("lifespan.")
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        if scope["type"] != "http":
            return
        parts = scope["path"].split("/", 3)
        app = self.sites.get(parts[2]) if len(parts) > 2 and parts[1] == "v" else None
        if app is None:
            response = PlainTextResponse("Not Found", status_code=404)
            response.headers["X-Robots-Tag"] = NOINDEX
            await response(scope, receive, send)
            return
        await app(scope, receive, send)


_HUBS: dict[tuple[str, int, int], _Hub] = {}
_LOCK = threading.Lock()


@contextmanager
def hosted(host: str, port: int, other_port: int, slug: str, app: ASGIApp) -> Iterator[None]:
    """Serve ``app`` under ``/v/<slug>`` on the hub at ``host:port`` and ``host:other_port``
    until the block ends (``app`` tells the origins apart by the port it was reached on)."""
    where = (host, port, other_port)
    with _LOCK:
        hub = _HUBS.get(where)
        if hub is None:
            hub = _Hub()
            sockets = []
            try:
                sockets.append(bind(host, port))
                sockets.append(bind(host, other_port))
            except OSError as exc:
                for sock in sockets:
                    sock.close()
                raise RuntimeError(
                    f"the case sites cannot listen on {host}:{port} and :{other_port}: {exc}. "
                    "Fix: free the ports, or set others in agent.settings.sites"
                ) from exc
            hub.stack.enter_context(serving(hub, sockets))
            _HUBS[where] = hub
        if slug in hub.sites:
            raise RuntimeError(f"a site at /v/{slug} is already served on {host}:{port}")
        hub.sites[slug] = app
    try:
        yield
    finally:
        with _LOCK:
            del hub.sites[slug]
            if not hub.sites:
                del _HUBS[where]
                hub.stack.close()
