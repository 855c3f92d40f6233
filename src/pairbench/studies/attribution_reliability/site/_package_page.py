"""The page shell of the evidence packages' sites: the stylesheet, a page with the site's
navigation bar, and a handler that always answers the same page.

Every package site uses this one shell, the webdriver probe included (only the rail
timetable's gate reads the cookie it sets), so no package's pages differ in their frame."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability.site._kit import (
    WEBDRIVER_PROBE,
    Handler,
    SiteContext,
    esc,
    page,
)

# The empty icon keeps Chromium from asking for /favicon.ico, whose 404 would otherwise
# show as a console error in every recorded step.
CSS = (
    '<link rel=icon href="data:,"><style>body{font-family:sans-serif;margin:0;color:#222}'
    "nav{display:flex;gap:14px;padding:10px 16px;background:#f4efe8}"
    "main{padding:12px 16px;max-width:560px}"
    "button{padding:6px 12px}label{display:block;margin-top:8px}"
    "li{margin:4px 0}.note{color:#555}</style>"
)


def doc(ctx: SiteContext, brand: str, nav: list[tuple[str, str]], title: str, main: str) -> str:
    """A page with the site's navigation bar (links relative to the slug)."""
    links = "".join(f'<a href="{ctx.url(p)}">{esc(label)}</a>' for p, label in nav)
    return page(
        f"{title} · {brand}",
        f"<nav><strong>{esc(brand)}</strong>{links}</nav><main><h1>{esc(title)}</h1>{main}</main>",
        head=CSS + WEBDRIVER_PROBE,
    )


def static(text: str, status: int = 200) -> Handler:
    """A handler that always answers ``text``."""

    async def handler(request: Request) -> Response:
        return HTMLResponse(text, status_code=status)

    return handler
