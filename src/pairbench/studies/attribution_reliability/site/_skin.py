"""The look of a fictional small business: header, nav, footer and a few ordinary pages.

The product-failure, tester-trap and their calibration sites share it, so every business
feels like a real small site (somewhere to go besides the goal's path) while each case's
mechanism stays in its own builder.

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

from pairbench.studies.attribution_reliability.site._kit import Handler, SiteContext, esc, page

_CSS = (
    "body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fbfaf7}"
    "header{display:flex;gap:1.5rem;align-items:center;padding:.8rem 1.5rem;"
    "background:var(--c);color:#fff}header a{color:#fff;text-decoration:none}"
    "header .brand{font-weight:700;font-size:1.2rem;margin-right:auto}"
    "main{max-width:52rem;margin:1.5rem auto;padding:0 1.5rem;line-height:1.5}"
    "footer{padding:1rem 1.5rem;color:#666;font-size:.85rem;border-top:1px solid #ddd}"
    "button,.btn{background:var(--c);color:#fff;border:0;border-radius:6px;"
    "padding:.6rem 1.1rem;font-size:1rem;cursor:pointer}"
    "label{display:block;margin:.6rem 0 .2rem}input,select{padding:.4rem;font-size:1rem}"
    ".card{border:1px solid #ddd;border-radius:8px;padding:1rem;margin:.8rem 0;"
    "background:#fff}.note{color:#555;font-size:.9rem}.err{color:#a11;font-weight:600}"
)


@dataclass(frozen=True)
class Skin:
    """A business's name, colour, nav links (label, path) and footer line."""

    name: str
    tagline: str
    colour: str
    nav: tuple[tuple[str, str], ...] = ()
    footer: str = ""

    def render(self, ctx: SiteContext, title: str, main: str, *, head: str = "") -> str:
        """A whole page: the business's header and footer around ``main`` (trusted markup)."""
        links = "".join(f'<a href="{ctx.url(p)}">{esc(label)}</a>' for label, p in self.nav)
        header = f'<header><a class="brand" href="{ctx.url()}">{esc(self.name)}</a>{links}</header>'
        foot = f"<footer>{esc(self.name)} · {esc(self.footer or self.tagline)}</footer>"
        style = f"<style>:root{{--c:{self.colour}}}{_CSS}</style>{head}"
        return page(f"{title} · {self.name}", f"{header}<main>{main}</main>{foot}", head=style)

    def respond(
        self, ctx: SiteContext, title: str, main: str, *, head: str = "", status: int = 200
    ) -> HTMLResponse:
        return HTMLResponse(self.render(ctx, title, main, head=head), status_code=status)

    def handler(self, ctx: SiteContext, title: str, main: str, *, head: str = "") -> Handler:
        """A handler that always answers this fixed page."""
        body = self.render(ctx, title, main, head=head)

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
