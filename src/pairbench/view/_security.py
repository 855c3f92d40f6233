"""The view's guard: the Host check and the security headers every response carries.

A page of the view shows what agents wrote, so it is built as if every string were hostile
(autoescaped templates, links only from plain names) and the browser is told the same:

- **Content-Security-Policy**: scripts and styles only from the view's own static files,
  no inline script, no plugins, no framing by other sites. The report page, which is
  ``render_html``'s self-contained page with its inline CSS, gets a policy of its own
  (:data:`REPORT_CSP`): inline styles, no script at all, and a sandbox.
- **Host check** (DNS rebinding): a page on ``evil.example`` whose name an attacker
  points at 127.0.0.1 reaches this server with ``Host: evil.example:PORT``; only
  ``127.0.0.1:PORT`` and ``localhost:PORT`` are served, anything else is a 400.
- **Read-only methods**: only GET and HEAD; the view changes nothing, so nothing else is
  accepted.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
"""Every page's policy: only the view's own scripts, styles, frames and requests."""

REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'self'; sandbox"
)
"""The report page's policy: the report's inline CSS and data: images, never a script;
``sandbox`` gives it an opaque origin even when opened on its own."""

HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
}
"""Sent with every response, beside its Content-Security-Policy."""

_METHODS = frozenset({"GET", "HEAD"})


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host header values served: ``127.0.0.1:PORT`` and ``localhost:PORT``.

    >>> sorted(allowed_hosts(8765))
    ['127.0.0.1:8765', 'localhost:8765']
    """
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
    if port == 80:  # a browser leaves the default port out of Host
        hosts |= {"127.0.0.1", "localhost"}
    return frozenset(hosts)


def _with_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    out = list(headers)
    names = {name.lower() for name, _ in out}
    if b"content-security-policy" not in names:
        out.append((b"content-security-policy", CSP.encode()))
    for name, value in HEADERS.items():
        if name.encode() not in names:
            out.append((name.encode(), value.encode()))
    return out


async def _refuse(send: Send, status: int, text: str, extra: dict[str, str] | None = None) -> None:
    body = text.encode("utf-8")
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *((k.encode(), v.encode()) for k, v in (extra or {}).items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": _with_headers(headers)})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: refuse a foreign Host or a writing method; add the headers.

    **Usage**::

        app = Guard(Starlette(routes=...), allowed_hosts(8765))
    """

    def __init__(self, app: ASGIApp, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hosts = [value for name, value in scope["headers"] if name == b"host"]
        host = hosts[0].decode("latin-1").lower() if len(hosts) == 1 else ""
        if host not in self.hosts:
            # Say which host is served, never echo the one asked for into a page.
            served = " or ".join(sorted(self.hosts))
            await _refuse(send, 400, f"400: this server answers only {served}\n")
            return
        if scope["method"] not in _METHODS:
            await _refuse(send, 405, "405: pairbench view is read-only\n", {"allow": "GET, HEAD"})
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": _with_headers(message.get("headers", []))}
            await send(message)

        await self.app(scope, receive, send_with_headers)
