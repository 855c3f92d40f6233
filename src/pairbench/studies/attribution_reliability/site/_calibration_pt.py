"""Calibration variants of P01, P02, P07, T01, T04 and T05: the same mechanisms in other
businesses and other words, used only to check fixtures, runner and scoring."""

from __future__ import annotations

import asyncio
import re

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from pairbench.studies.attribution_reliability.site._kit import (
    CaseSite,
    SiteBuilder,
    SiteContext,
    esc,
)
from pairbench.studies.attribution_reliability.site._skin import Skin, form_fields


def build_cp01(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Olive & Ember",
        "Wood-fired kitchen",
        "#6d4c41",
        nav=(("Menu", "/menu"), ("Tables", "/tables"), ("Find us", "/contact")),
    )
    # The handler waits on a flag nothing sets, so it leaves before doing anything.
    tables = (
        "<h1>Tables</h1><label for='g'>Guests</label><select id='g'><option>2</option>"
        "<option>4</option><option>6</option></select><label for='w'>When</label>"
        "<select id='w'><option>Friday 19:00</option><option>Friday 20:30</option>"
        "<option>Saturday 19:00</option></select><label for='nm'>Name for the table</label>"
        "<input id='nm' autocomplete='off'><p><button type='button' id='go'>Book a table"
        "</button></p><script>var open = false;"
        "document.getElementById('go').addEventListener('click', function () {"
        "  if (!open) { return; }"
        f"  fetch('{ctx.url('/tables/hold')}', {{method: 'POST'}});"
        "});</script>"
    )

    async def hold(_request: Request) -> Response:
        return JSONResponse({"ok": True})

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Fire, bread and good company</h1><p>Small plates from the oven, "
                "Tuesday to Sunday evenings.</p>",
            ),
            "/menu": skin.handler(ctx, "Menu", "<h1>Menu</h1><p>Flatbreads, grilled fish.</p>"),
            "/tables": skin.handler(ctx, "Tables", tables),
            "POST /tables/hold": hold,
            **skin.ordinary(ctx, about="A former forge, now a kitchen."),
        }
    )


def build_cp02(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Hollow Pine Campsite",
        "Pitches under the pines",
        "#2e5e3e",
        nav=(("Pitches", "/pitches"), ("Stay", "/stay"), ("About", "/about")),
    )
    # A plus sign is legal in an address's local part; this pattern refuses it.
    strict = re.compile(r"[a-z0-9._-]+@[a-z0-9.-]+\.[a-z]{2,}")

    def form(values: dict[str, str], error: str = "") -> str:
        err = f"<p class='err'>{esc(error)}</p>" if error else ""
        return (
            f"<h1>Stay with us</h1>{err}<form method='post' action='{ctx.url('/stay')}'>"
            "<label for='a'>Your name</label>"
            f"<input id='a' name='a' value='{esc(values.get('a', ''))}'>"
            "<label for='b'>Email for your confirmation</label>"
            f"<input id='b' name='b' value='{esc(values.get('b', ''))}'>"
            "<label for='c'>Nights</label><select id='c' name='c'><option>1</option>"
            "<option>2</option><option>3</option></select><p><button>Request pitch</button>"
            "</p></form>"
        )

    async def stay(_request: Request) -> Response:
        return skin.respond(ctx, "Stay", form({}))

    async def submit(request: Request) -> Response:
        values = await form_fields(request)
        if not strict.fullmatch(values.get("b", "").strip().lower()):
            return skin.respond(ctx, "Stay", form(values, "That email address doesn't look right."))
        return skin.respond(
            ctx, "Requested", "<h1>Pitch requested</h1><p>We'll confirm within a day.</p>"
        )

    return CaseSite(
        routes={
            "": skin.handler(
                ctx, "Home", "<h1>Sleep under the pines</h1><p>Tent pitches from £18 a night.</p>"
            ),
            "/pitches": skin.handler(
                ctx, "Pitches", "<h1>Pitches</h1><p>Thirty grass pitches.</p>"
            ),
            "/stay": stay,
            "POST /stay": submit,
            **skin.ordinary(ctx, about="A farm that grew a campsite."),
        }
    )


def build_cp07(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Oakridge Furniture",
        "Solid wood, made to last",
        "#795548",
        nav=(("Collection", "/collection"), ("Purchases", "/purchases"), ("About", "/about")),
    )

    async def receipt(_request: Request) -> Response:
        body = skin.render(
            ctx,
            "Error",
            "<div class='card'><h1>We hit a snag</h1><p>This page couldn't be shown. "
            "Please come back later.</p></div>",
        )
        return HTMLResponse(body, status_code=500)

    return CaseSite(
        routes={
            "": skin.handler(ctx, "Home", "<h1>Furniture for a lifetime</h1><p>Oak and ash.</p>"),
            "/collection": skin.handler(ctx, "Collection", "<h1>Tables and chairs</h1>"),
            "/purchases": skin.handler(
                ctx,
                "Purchases",
                "<h1>Purchases</h1><div class='card'>Oak dining table · £1,150 · delivered "
                f"12 May <a class='btn' href='{ctx.url('/purchases/2208/doc')}'>Download "
                "receipt</a></div>",
            ),
            "/purchases/2208/doc": receipt,
            **skin.ordinary(ctx, about="Joiners in the Chilterns since 1972."),
        }
    )


def build_ct01(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Northgate Library",
        "Free to join, free to borrow",
        "#455a9f",
        nav=(("Catalogue", "/catalogue"), ("Events", "/events")),
    )
    bar = (
        "<style>.vb{position:relative;display:inline-block;padding:.4rem 0}.vm{display:none;"
        "position:absolute;top:100%;left:0;background:#fff;border:1px solid #ccc;"
        "min-width:11rem}.vm a{display:block;padding:.3rem .5rem}.vb:hover .vm{display:block}"
        "</style><div class='vb'>Visit us ▾<div class='vm'>"
        f"<a href='{ctx.url('/visit/times')}'>Opening hours</a>"
        f"<a href='{ctx.url('/visit/map')}'>Getting here</a></div></div>"
    )
    return CaseSite(
        routes={
            "": skin.handler(ctx, "Home", f"{bar}<h1>Your library</h1><p>Books, films, Wi-Fi.</p>"),
            "/catalogue": skin.handler(ctx, "Catalogue", f"{bar}<h1>Catalogue</h1>"),
            "/events": skin.handler(ctx, "Events", f"{bar}<h1>Events</h1><p>Story time.</p>"),
            "/visit/times": skin.handler(
                ctx,
                "Opening hours",
                f"{bar}<h1>Opening hours</h1><p>Monday to Friday 9:00 to 19:00; Saturday 9:00 "
                "to 16:00; closed Sunday.</p>",
            ),
            "/visit/map": skin.handler(ctx, "Getting here", f"{bar}<h1>Getting here</h1>"),
        }
    )


def build_ct04(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Sunny Side Grocer",
        "Fruit and veg to your door",
        "#e08a00",
        nav=(("Boxes", "/boxes"), ("Do we deliver?", "/area"), ("About", "/about")),
    )
    area = (
        "<h1>Do we deliver to you?</h1><label for='pc'>Postcode</label><input id='pc' "
        "autocomplete='off'> <button type='button' id='go'>Check postcode</button> "
        "<span id='w' style='visibility:hidden;opacity:.2'>…</span><p id='out'></p>"
        "<script>document.getElementById('go').addEventListener('click', function () {"
        "  document.getElementById('w').style.visibility = 'visible';"
        f"  fetch('{ctx.url('/area/lookup')}?pc=' + encodeURIComponent("
        "document.getElementById('pc').value)).then(function (r) { return r.json(); })"
        "  .then(function (d) { document.getElementById('w').style.visibility = 'hidden';"
        "    document.getElementById('out').textContent = d.text; }); });</script>"
    )

    async def lookup(request: Request) -> Response:
        # The answer is slow (four seconds) but always arrives.
        await asyncio.sleep(4.0)
        pc = request.query_params.get("pc", "").strip().upper()[:8] or "your area"
        return JSONResponse({"text": f"Yes! We deliver to {pc} on Wednesdays, £3.50."})

    return CaseSite(
        routes={
            "": skin.handler(ctx, "Home", "<h1>Seasonal boxes</h1><p>From £14 a week.</p>"),
            "/boxes": skin.handler(ctx, "Boxes", "<h1>Boxes</h1><p>Small, medium, large.</p>"),
            "/area": skin.handler(ctx, "Do we deliver?", area),
            "/area/lookup": lookup,
            **skin.ordinary(ctx, about="Two growers and a van."),
        }
    )


def build_ct05(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Summit Walls",
        "Indoor climbing for all",
        "#5e35b1",
        nav=(("Sessions", "/sessions"), ("Prices", "/prices"), ("About", "/about")),
    )
    # A drag-only custom slider: clicking the track does nothing, the knob must be dragged.
    slider = (
        "<style>.tr{position:relative;width:300px;height:8px;background:#ccc;margin:1.5rem 0;"
        "border-radius:4px}.kn{position:absolute;top:-8px;left:0;width:24px;height:24px;"
        "border-radius:50%;background:#5e35b1;cursor:grab}</style>"
        "<h1>Book a session</h1><p>Saturday, from 10:00.</p><p>Session length: "
        "<strong id='hv'>1</strong> h</p><div class='tr' id='tr'><div class='kn' id='kn'>"
        f"</div></div><form action='{ctx.url('/sessions/book')}'><input type='hidden' "
        "name='h' id='h' value='1'><button>Book session</button></form>"
        "<script>var kn = document.getElementById('kn'), tr = document.getElementById('tr');"
        "var drag = false;"
        "kn.addEventListener('mousedown', function (e) { drag = true; e.preventDefault(); });"
        "window.addEventListener('mouseup', function () { drag = false; });"
        "window.addEventListener('mousemove', function (e) { if (!drag) { return; }"
        "  var b = tr.getBoundingClientRect();"
        "  var x = Math.max(0, Math.min(b.width, e.clientX - b.left));"
        "  var h = 1 + Math.round(x / b.width * 3); kn.style.left = ((h - 1) / 3 * 276) + 'px';"
        "  document.getElementById('hv').textContent = String(h);"
        "  document.getElementById('h').value = String(h); });</script>"
    )

    async def book(request: Request) -> Response:
        raw = request.query_params.get("h", "1")
        hours = int(raw) if raw in ("1", "2", "3", "4") else 1
        return skin.respond(
            ctx, "Booked", f"<h1>See you Saturday</h1><p>{hours} h on the wall from 10:00.</p>"
        )

    return CaseSite(
        routes={
            "": skin.handler(ctx, "Home", "<h1>Climb with us</h1><p>Bouldering and ropes.</p>"),
            "/sessions": skin.handler(ctx, "Sessions", slider),
            "/sessions/book": book,
            "/prices": skin.handler(ctx, "Prices", "<h1>Prices</h1><p>£12 per hour.</p>"),
            **skin.ordinary(ctx, about="Built in an old bus depot."),
        }
    )


BUILDERS: dict[str, SiteBuilder] = {
    "cp01-restaurant-tables": build_cp01,
    "cp02-campsite-stay": build_cp02,
    "cp07-furniture-purchases": build_cp07,
    "ct01-library-visit": build_ct01,
    "ct04-grocer-area": build_ct04,
    "ct05-climbing-sessions": build_ct05,
}

__all__ = ["BUILDERS"]
