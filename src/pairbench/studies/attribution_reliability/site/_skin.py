"""The one page shell of every case's site: a fictional small business's header, nav, footer
and a few ordinary pages.

Every case, whatever its class, is served in this shell: the same title pattern
(``<page> · <business>``), head (charset, robots, viewport, one stylesheet, the webdriver
probe), brand markup, nav and footer; ``test_shell_fingerprint`` checks it. So every business
feels like a real small site while each case's mechanism stays in its own builder, and
nothing around the page tells which kind of case it is.

**Usage**::

    skin = Skin("Crumb & Co.", "Cakes baked to order", "#b4572e",
                nav=(("Cakes", "/cakes"), ("About", "/about")))
    routes = skin.ordinary(ctx, about="Family bakery since 1998.")
    routes["/cakes"] = skin.handler(ctx, "Cakes", "<h1>Cakes</h1>")
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability.site._kit import (
    WEBDRIVER_PROBE,
    Handler,
    SiteContext,
    esc,
    page,
)

_CSS = (
    "body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fbfaf7}"
    "header{display:flex;gap:1.5rem;align-items:center;padding:.8rem 1.5rem;"
    "background:var(--c);color:#fff}header a{color:#fff;text-decoration:none}"
    "header .brand{font:bold 1.2rem system-ui,sans-serif;margin-right:auto}"
    "header nav{display:flex;gap:1.5rem;flex-wrap:wrap}"
    "main{max-width:52rem;margin:1.5rem auto;padding:0 1.5rem;line-height:1.5}"
    "footer{padding:1rem 1.5rem;color:#666;font-size:.85rem;border-top:1px solid #ddd}"
    "button,.btn{background:var(--c);color:#fff;border:0;border-radius:6px;"
    "padding:.6rem 1.1rem;font-size:1rem;cursor:pointer}"
    "label{display:block;margin:.6rem 0 .2rem}"
    "input,select,textarea{padding:.4rem;font-size:1rem;font-family:inherit}"
    ".card{border:1px solid #ddd;border-radius:8px;padding:1rem;margin:.8rem 0;"
    "background:#fff}.note{color:#555;font-size:.9rem}"
    # ``font: bold`` rather than ``font-weight: 600``: a stylesheet on every page must carry
    # no case's target term (X09's is "weight") and no digit run X05's phone probe reads.
    ".err{color:#a11;font:bold 1em/1.5 system-ui,sans-serif}"
)


@dataclass(frozen=True)
class Skin:
    """A business's name, tagline, colour, nav links (label, path) and footer line."""

    name: str
    tagline: str
    colour: str
    nav: tuple[tuple[str, str], ...] = ()
    footer: str = ""
    home: str = ""
    """Where the brand links (relative to the slug): another host's page links to itself."""

    def render(self, ctx: SiteContext, title: str, main: str) -> str:
        """A whole page: the business's header and footer around ``main`` (trusted markup).

        The webdriver probe is on every page of every site, gated or not, so its presence
        says nothing; only an automation gate's server reads the cookie it sets."""
        links = "".join(f'<a href="{esc(ctx.url(p))}">{esc(label)}</a>' for label, p in self.nav)
        brand = f'<a class="brand" href="{esc(ctx.url(self.home))}">{esc(self.name)}</a>'
        header = f"<header>{brand}<nav>{links}</nav></header>"
        foot = f"<footer>{esc(self.name)} · {esc(self.footer or self.tagline)}</footer>"
        head = f"<style>:root{{--c:{self.colour}}}{_CSS}</style>{WEBDRIVER_PROBE}"
        return page(f"{title} · {self.name}", f"{header}<main>{main}</main>{foot}", head=head)

    def respond(
        self, ctx: SiteContext, title: str, main: str, *, status: int = 200
    ) -> HTMLResponse:
        return HTMLResponse(self.render(ctx, title, main), status_code=status)

    def handler(self, ctx: SiteContext, title: str, main: str) -> Handler:
        """A handler that always answers this fixed page."""
        body = self.render(ctx, title, main)

        async def answer(_request: Request) -> Response:
            return HTMLResponse(body)

        return answer

    def ordinary(self, ctx: SiteContext, *, about: str, contact: str = "") -> dict[str, Handler]:
        """``/about`` and ``/contact``: the pages every small business has."""
        contact = contact or "Call in during opening hours, Monday to Saturday, 9am to 5pm."
        return {
            "/about": self.handler(ctx, "About us", f"<h1>About us</h1><p>{about}</p>"),
            "/contact": self.handler(ctx, "Contact", f"<h1>Contact</h1><p>{contact}</p>"),
        }


async def form_fields(request: Request) -> dict[str, str]:
    """An urlencoded form body as a flat dict (the first value of each field)."""
    raw = (await request.body()).decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}


__all__ = ["Skin", "form_fields"]
