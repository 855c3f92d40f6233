"""The product-failure site P08: order tracking fails to load, and its retry control only hides and
re-shows the message."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext
from pairbench.studies.attribution_reliability.site._skin import Skin


def build_p08(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Pixel Mill Prints",
        "Photo prints and albums",
        "#7a3f8f",
        nav=(("Prints", "/prints"), ("Track my order", "/track"), ("About", "/about")),
    )
    # The first load really fails; the retry control only hides and re-shows the same
    # message, without asking the server again.
    track = (
        "<h1>Track my order</h1><p>Order PM-30512 · 24 matt prints, 6x4</p>"
        "<div id='out' class='card'>Loading…</div>"
        "<div id='fail' class='card' style='display:none'><p class='err'>We couldn't load "
        "your order's progress just now.</p><button type='button' id='again'>Try again"
        "</button></div>"
        "<script>var fail = document.getElementById('fail');"
        "var out = document.getElementById('out');"
        f"fetch('{ctx.url('/track/status')}').then(function (r) {{ return r.json(); }})"
        ".then(function (d) { if (d.eta) { out.textContent = d.eta; }"
        " else { out.style.display = 'none'; fail.style.display = 'block'; } })"
        ".catch(function () { out.style.display = 'none'; fail.style.display = 'block'; });"
        "document.getElementById('again').addEventListener('click', function () {"
        "  fail.style.display = 'none';"
        "  setTimeout(function () { fail.style.display = 'block'; }, 400);"
        "});</script>"
    )

    async def status(_request: Request) -> Response:
        return JSONResponse({"status": "error"}, status_code=500)

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Your photos, on paper</h1><p>Prints, posters and albums, usually sent "
                "within three working days.</p>",
            ),
            "/prints": skin.handler(
                ctx, "Prints", "<h1>Prints</h1><div class='card'>6x4 matt · 12p each</div>"
            ),
            "/track": skin.handler(ctx, "Track my order", track),
            "/track/status": status,
            **skin.ordinary(ctx, about="A photo lab that still loves paper."),
        }
    )
