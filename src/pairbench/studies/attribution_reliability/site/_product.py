"""Sites whose product really fails on the goal's path (P01..P10).

Each is a small business with ordinary pages; the failure sits where a user reaching for
the goal meets it. Nothing on a page says so: the copy is the business's own.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pairbench.studies.attribution_reliability.site._kit import (
    CaseSite,
    SiteBuilder,
    SiteContext,
    esc,
)
from pairbench.studies.attribution_reliability.site._product_p06 import build_p06
from pairbench.studies.attribution_reliability.site._product_p07 import build_p07
from pairbench.studies.attribution_reliability.site._product_p08 import build_p08
from pairbench.studies.attribution_reliability.site._product_p09 import build_p09
from pairbench.studies.attribution_reliability.site._product_p10 import build_p10
from pairbench.studies.attribution_reliability.site._skin import Skin, form_fields


def build_p01(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Crumb & Co. Bakery",
        "Celebration cakes baked to order",
        "#b4572e",
        nav=(("Cakes", "/cakes"), ("About", "/about"), ("Contact", "/contact")),
        footer="14 Mill Lane, open Tuesday to Sunday",
    )
    cakes = (
        ("lemon", "Lemon drizzle", 28),
        ("choc", "Chocolate fudge", 32),
        ("vic", "Victoria sponge", 26),
    )
    cards = "".join(
        f'<div class="card"><h3>{name}</h3><p>Serves 12 · £{price}</p>'
        f'<a class="btn" href="{ctx.url("/checkout")}?cake={key}">Choose this cake</a></div>'
        for key, name, price in cakes
    )
    # The click handler waits for a session object nothing ever creates, so it returns
    # before sending anything: no request, no change on the page.
    script = (
        "<script>var session = null;"
        "document.getElementById('f').addEventListener('submit', function (e) {"
        "  e.preventDefault(); });"
        "document.getElementById('go').addEventListener('click', function () {"
        "  if (!session) { return; }"
        f"  fetch('{ctx.url('/orders')}', {{method: 'POST',"
        "    body: new FormData(document.getElementById('f'))})"
        f"    .then(function () {{ location.href = '{ctx.url('/thanks')}'; }});"
        "});</script>"
    )

    async def checkout(request: Request) -> Response:
        key = request.query_params.get("cake", "lemon")
        name, price = next(((n, p) for k, n, p in cakes if k == key), (cakes[0][1], cakes[0][2]))
        main = (
            f"<h1>Your order</h1><div class='card'>{esc(name)} · £{price}</div>"
            "<form id='f'><label for='who'>Your name</label><input id='who' autocomplete='off'>"
            "<label for='day'>Collection day</label><select id='day'><option>Thursday</option>"
            "<option>Friday</option><option>Saturday</option><option>Sunday</option></select>"
            "<p class='note'>Pay when you collect. We bake everything fresh that morning.</p>"
            "<button type='button' id='go'>Place order</button></form>" + script
        )
        return skin.respond(ctx, "Your order", main)

    async def orders(_request: Request) -> Response:
        return JSONResponse({"ok": True})

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Cakes for every celebration</h1><p>Birthdays, weddings and Sunday "
                "teas: every cake is baked to order in our kitchen on Mill Lane.</p>"
                f'<p><a class="btn" href="{ctx.url("/cakes")}">See our cakes</a></p>',
            ),
            "/cakes": skin.handler(ctx, "Cakes", f"<h1>Our cakes</h1>{cards}"),
            "/checkout": checkout,
            "POST /orders": orders,
            **skin.ordinary(ctx, about="A family bakery on Mill Lane since 1998."),
        }
    )


def build_p02(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Spoke & Chain Cycles",
        "Bike repairs and servicing",
        "#2f6b4f",
        nav=(("Services", "/services"), ("Book a service", "/book"), ("About", "/about")),
        footer="Unit 3, Canal Yard",
    )
    # Only mobile numbers written without spaces pass: a landline in its usual written
    # form is refused although the shop asks for any number it can call.
    strict = re.compile(r"07\d{9}")

    def form(values: dict[str, str], error: str = "") -> str:
        err = f"<p class='err'>{esc(error)}</p>" if error else ""
        days = "".join(
            f"<option{' selected' if values.get('d') == d else ''}>{d}</option>"
            for d in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
        )
        return (
            f"<h1>Book a service</h1>{err}<form method='post' action='{ctx.url('/book')}'>"
            "<label for='n'>Your name</label>"
            f"<input id='n' name='n' value='{esc(values.get('n', ''))}'>"
            "<label for='t'>Phone</label>"
            f"<input id='t' name='t' value='{esc(values.get('t', ''))}'>"
            "<label for='s'>Service</label><select id='s' name='s'><option>Standard service"
            "</option><option>Full service</option><option>Puncture repair</option></select>"
            f"<label for='d'>Drop-off day</label><select id='d' name='d'>{days}</select>"
            "<p><button>Book service</button></p></form>"
        )

    async def book_page(_request: Request) -> Response:
        return skin.respond(ctx, "Book a service", form({}))

    async def book(request: Request) -> Response:
        values = await form_fields(request)
        if not values.get("n", "").strip():
            return skin.respond(ctx, "Book a service", form(values, "Please tell us your name."))
        if not strict.fullmatch(values.get("t", "")):
            return skin.respond(
                ctx, "Book a service", form(values, "Please enter a valid phone number.")
            )
        day = esc(values.get("d", "Monday"))
        return skin.respond(
            ctx, "Booked", f"<h1>You're booked in</h1><p>See you on {day} from 8:30am.</p>"
        )

    services = "".join(
        f"<div class='card'><h3>{n}</h3><p>£{p}</p></div>"
        for n, p in (("Standard service", 45), ("Full service", 85), ("Puncture repair", 12))
    )
    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Keep your bike rolling</h1><p>Servicing, repairs and fittings by "
                "mechanics who ride every day. Most services done the same day.</p>"
                f"<p><a class='btn' href='{ctx.url('/book')}'>Book a service</a></p>",
            ),
            "/services": skin.handler(ctx, "Services", f"<h1>Services and prices</h1>{services}"),
            "/book": book_page,
            "POST /book": book,
            **skin.ordinary(ctx, about="Two mechanics, one workshop, twelve years on the canal."),
        }
    )


def build_p03(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Lantern Leaf Tea",
        "Loose-leaf tea, packed by hand",
        "#6b4f2f",
        nav=(("Teas", "/teas"), ("Shipping", "/help/rates"), ("About", "/about")),
        footer="Packed in small batches. Careers",
    )
    # The nav's delivery-costs link points at the careers page's handler.
    careers = skin.handler(
        ctx,
        "Careers",
        "<h1>Work with us</h1><p>We're looking for a part-time packing assistant, three "
        "mornings a week. Experience with tea is welcome but not needed.</p>"
        "<p>Drop in to the shop with a short note about yourself.</p>",
    )
    teas = "".join(
        f"<div class='card'><h3>{n}</h3><p>100 g tin · £{p}</p></div>"
        for n, p in (("Assam breakfast", 7), ("Jasmine pearls", 12), ("Lapsang", 9))
    )
    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Tea worth waiting for</h1><p>Small-batch loose-leaf teas from growers "
                "we know by name, sent all over the country.</p>"
                f"<p><a class='btn' href='{ctx.url('/teas')}'>Browse teas</a></p>",
            ),
            "/teas": skin.handler(ctx, "Teas", f"<h1>Our teas</h1>{teas}"),
            "/help/rates": careers,
            "/careers": careers,
            **skin.ordinary(ctx, about="A tiny tea room that started sending tins by post."),
        }
    )


def build_p04(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Fern & Pot",
        "House plants and planters",
        "#3d7a3a",
        nav=(("Plants", "/plants"), ("About", "/about"), ("Contact", "/contact")),
    )
    plants = (
        ("Echeveria (small succulent)", 6),
        ("Haworthia (small succulent)", 6),
        ("Terracotta pot, 12 cm", 8),
        ("Glazed pot, 14 cm", 12),
    )
    cards = "".join(
        f"<div class='card'><h3>{n}</h3><p>£{p}</p><button type='button' class='add' "
        f"data-p='{i}'>Add to basket</button></div>"
        for i, (n, p) in enumerate(plants)
    )
    # The chosen items live in a page variable only: leaving the page forgets them.
    script = (
        "<script>var items = [];"
        "document.querySelectorAll('.add').forEach(function (b) {"
        "  b.addEventListener('click', function () { items.push(b.dataset.p);"
        "    document.getElementById('n').textContent = String(items.length); });"
        "});</script>"
    )
    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Plants that fit on a windowsill</h1><p>Easy-going house plants and pots "
                "to match, delivered in sturdy boxes.</p>"
                f"<p><a class='btn' href='{ctx.url('/plants')}'>Shop plants</a></p>",
            ),
            "/plants": skin.handler(
                ctx,
                "Plants",
                f"<h1>Plants and pots</h1><p><a href='{ctx.url('/cart')}'>Basket "
                f"(<span id='n'>0</span>)</a></p>{cards}"
                f"<p><a class='btn' href='{ctx.url('/cart')}'>Go to checkout</a></p>{script}",
            ),
            "/cart": skin.handler(
                ctx,
                "Checkout",
                "<h1>Checkout</h1><p>Your basket is empty.</p>"
                f"<p><a href='{ctx.url('/plants')}'>Browse plants</a></p>",
            ),
            **skin.ordinary(ctx, about="Two friends, one greenhouse and a lot of repotting."),
        }
    )


def build_p05(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Maple Court Tennis Club",
        "Floodlit courts, open to everyone",
        "#1f5f8b",
        nav=(("Courts", "/courts"), ("Coaching", "/coaching"), ("About", "/about")),
    )
    slots = ("Thursday 6pm", "Thursday 7pm", "Thursday 8pm", "Friday 6pm")
    rows = "".join(
        f"<div class='card'><strong>Court 2 · {s}</strong> · £14 "
        f"<button type='button' class='r' data-s='{i}'>Reserve</button></div>"
        for i, s in enumerate(slots)
    )
    # The hold request succeeds, but the page waits for a reference the answer never
    # carries, so the waiting indicator stays up for good.
    script = (
        "<style>.ring{width:22px;height:22px;border:3px solid #ccc;border-top-color:#1f5f8b;"
        "border-radius:50%;animation:s 1s linear infinite;display:inline-block}"
        "@keyframes s{to{transform:rotate(360deg)}}</style>"
        "<script>document.querySelectorAll('.r').forEach(function (b) {"
        "  b.addEventListener('click', function () {"
        "    document.querySelectorAll('.r').forEach(function (x) { x.disabled = true; });"
        "    document.getElementById('wait').style.display = 'block';"
        f"    fetch('{ctx.url('/courts/hold')}', {{method: 'POST', headers: {{'content-type': "
        "'application/json'}, body: JSON.stringify({slot: b.dataset.s})})"
        "      .then(function (r) { return r.json(); })"
        "      .then(function (d) { if (d.ref) { document.getElementById('wait').style.display"
        " = 'none'; document.getElementById('done').textContent = d.ref; } });"
        "  });"
        "});</script>"
    )

    async def hold(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Play under the lights</h1><p>Four hard courts, open 7am to 10pm. "
                "Members and visitors welcome.</p>"
                f"<p><a class='btn' href='{ctx.url('/courts')}'>See court times</a></p>",
            ),
            "/courts": skin.handler(
                ctx,
                "Court times",
                f"<h1>Court times this week</h1>{rows}<div id='wait' style='display:none'>"
                f"<span class='ring'></span> One moment…</div><p id='done'></p>{script}",
            ),
            "POST /courts/hold": hold,
            "/coaching": skin.handler(
                ctx, "Coaching", "<h1>Coaching</h1><p>Group sessions on Saturday mornings.</p>"
            ),
            **skin.ordinary(ctx, about="A members' club run by volunteers since 1962."),
        }
    )


BUILDERS: dict[str, SiteBuilder] = {
    "p01-bakery-order": build_p01,
    "p02-cycle-booking": build_p02,
    "p03-tea-shop": build_p03,
    "p04-plant-shop": build_p04,
    "p05-tennis-courts": build_p05,
    "p06-dental-booking": build_p06,
    "p07-print-orders": build_p07,
    "p08-photo-tracking": build_p08,
    "p09-bookshop-catalogue": build_p09,
    "p10-florist-delivery": build_p10,
}

__all__ = ["BUILDERS"]
