"""The second half of the product-failure sites (P06..P10); ``_product`` registers them."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext, esc
from pairbench.studies.attribution_reliability.site._skin import Skin


def build_p06(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Brightside Dental",
        "Family dentistry on the high street",
        "#2a7f8f",
        nav=(("Treatments", "/treatments"), ("Book", "/book"), ("About", "/about")),
    )
    times = ("Monday 9:00", "Monday 11:30", "Wednesday 14:00", "Thursday 16:30")
    radios = "".join(
        f"<label><input type='radio' name='slot' value='{i}'{' checked' if i == 0 else ''}>"
        f" {t}</label>"
        for i, t in enumerate(times)
    )
    # An empty promotional slot, transparent and fixed above the bottom bar, takes every
    # click meant for the bar's button.
    book = (
        "<h1>Book a check-up</h1><p>Choose a time that suits you.</p>"
        f"<form id='f' action='{ctx.url('/book/details')}'>{radios}"
        "<div style='height:220px'></div>"
        "<div style='position:fixed;left:0;right:0;bottom:0;padding:1rem 1.5rem;"
        "background:#fff;border-top:1px solid #ddd;z-index:10'>"
        "<button>Continue</button></div></form>"
        "<div class='promo-slot' style='position:fixed;left:0;right:0;bottom:0;height:150px;"
        "z-index:20;background:transparent'></div>"
    )
    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Gentle care for the whole family</h1><p>Check-ups, hygiene visits and "
                "emergency appointments, six days a week.</p>"
                f"<p><a class='btn' href='{ctx.url('/book')}'>Book a visit</a></p>",
            ),
            "/treatments": skin.handler(
                ctx,
                "Treatments",
                "<h1>Treatments</h1><div class='card'>Check-up · £45</div>"
                "<div class='card'>Hygiene visit · £60</div>",
            ),
            "/book": skin.handler(ctx, "Book a check-up", book),
            "/book/details": skin.handler(
                ctx, "Your details", "<h1>Your details</h1><p>Step 2 of 3.</p>"
            ),
            **skin.ordinary(
                ctx, about="Dr Okafor and team have cared for local smiles for 20 years."
            ),
        }
    )


def build_p07(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Harbour Print Co.",
        "Business cards, flyers and posters",
        "#37474f",
        nav=(("Products", "/products"), ("My orders", "/orders"), ("About", "/about")),
    )
    orders = (
        "<h1>My orders</h1><p>Welcome back, Sam.</p>"
        "<div class='card'><h3>Order 4471 · 500 business cards</h3><p>Dispatched "
        "last Tuesday · £38.00</p>"
        f"<a class='btn' href='{ctx.url('/orders/4471/pdf')}'>Download invoice</a></div>"
        "<div class='card'><h3>Order 4390 · 100 A5 flyers</h3><p>Delivered in March · £24.00"
        "</p></div>"
    )

    async def pdf(_request: Request) -> Response:
        body = skin.render(
            ctx,
            "Something went wrong",
            "<div class='card' style='text-align:center'><h1>Sorry, something went wrong "
            "on our side</h1><p>Please try again later.</p><p class='note'>Reference "
            "7F3A-221</p></div>",
        )
        return HTMLResponse(body, status_code=500)

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Print that makes an impression</h1><p>Upload once, reorder any time. "
                "Your past orders are under My orders.</p>",
            ),
            "/products": skin.handler(
                ctx,
                "Products",
                "<h1>Products</h1><div class='card'>Business cards from £18</div>"
                "<div class='card'>A5 flyers from £15</div>",
            ),
            "/orders": skin.handler(ctx, "My orders", orders),
            "/orders/4471/pdf": pdf,
            **skin.ordinary(ctx, about="A print shop by the harbour since 1989."),
        }
    )


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


_BOOKS = (
    ("The Remains of the Day", "Kazuo Ishiguro"),
    ("Middlemarch", "George Eliot"),
    ("A Month in the Country", "J. L. Carr"),
    ("The Secret History", "Donna Tartt"),
    ("Cold Comfort Farm", "Stella Gibbons"),
    ("The Go-Between", "L. P. Hartley"),
    ("Rebecca", "Daphne du Maurier"),
    ("Stoner", "John Williams"),
    ("I Capture the Castle", "Dodie Smith"),
    ("The Hobbit", "J. R. R. Tolkien"),
)


def build_p09(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Dog-Ear Books",
        "Second-hand books, well loved",
        "#8b5a2b",
        nav=(("Books", "/books"), ("Sell to us", "/sell"), ("About", "/about")),
    )

    async def books(request: Request) -> Response:
        raw = request.query_params.get("p", "1")
        number = int(raw) if raw.isdigit() and 1 <= int(raw) <= 3 else 1
        # The shelf shown ignores the requested page: every page lists the first ten.
        rows = "".join(
            f"<div class='card'><strong>{esc(t)}</strong> · {esc(a)} · £4</div>" for t, a in _BOOKS
        )
        links = " ".join(f"<a href='{ctx.url('/books')}?p={n}'>{n}</a>" for n in (1, 2, 3))
        after = (
            f" <a href='{ctx.url('/books')}?p={number + 1}'>Next page →</a>" if number < 3 else ""
        )
        main = (
            f"<h1>In stock now</h1><p class='note'>Page {number} of 3 · 30 books</p>{rows}"
            f"<p>{links}{after}</p>"
        )
        return skin.respond(ctx, "Books", main)

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Thirty good books, this week</h1><p>Our shelves change every Monday. "
                "Everything in stock is listed online.</p>"
                f"<p><a class='btn' href='{ctx.url('/books')}'>See what's in</a></p>",
            ),
            "/books": books,
            "/sell": skin.handler(
                ctx, "Sell to us", "<h1>Sell to us</h1><p>Bring books in on Mondays.</p>"
            ),
            **skin.ordinary(ctx, about="A bookshop in a former bakery, open since 2004."),
        }
    )


def build_p10(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Petal Post Florist",
        "Fresh flowers, sent across London",
        "#c2185b",
        nav=(("Flowers", "/flowers"), ("Delivery", "/delivery"), ("About", "/about")),
    )
    areas = "".join(
        f"<div class='card'><strong>{a}</strong> · £{p}</div>"
        for a, p in (("Central London", 6), ("East London", 7), ("North London", 7))
    )
    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Flowers for today, not next week</h1><p>Hand-tied bouquets from our "
                "Hackney studio. Delivery times for every London postcode are on our "
                f"<a href='{ctx.url('/delivery')}'>delivery page</a>.</p>",
            ),
            "/flowers": skin.handler(
                ctx,
                "Flowers",
                "<h1>Bouquets</h1><div class='card'>Seasonal hand-tied · £35</div>"
                "<div class='card'>Peonies and eucalyptus · £48</div>",
            ),
            "/delivery": skin.handler(
                ctx,
                "Delivery",
                f"<h1>Delivery</h1><p>We deliver across London.</p>{areas}"
                "<p class='note'>Prices per bouquet, per address.</p>",
            ),
            **skin.ordinary(ctx, about="Three florists and a cargo bike."),
        }
    )


__all__ = ["build_p06", "build_p07", "build_p08", "build_p09", "build_p10"]
