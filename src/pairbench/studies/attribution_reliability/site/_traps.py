"""Sites that work but are hard on a hurried tester (T01..T10).

A careful user reaches every goal: hover the menu, read the form, scroll, wait, drag.
Nothing on a page hints at the difficulty; the copy is the business's own.
"""

from __future__ import annotations

import asyncio
import json

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pairbench.studies.attribution_reliability.site._canvas import canvas_seats
from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteBuilder, SiteContext
from pairbench.studies.attribution_reliability.site._skin import Skin
from pairbench.studies.attribution_reliability.site._trap_t06 import build_t06
from pairbench.studies.attribution_reliability.site._trap_t07 import build_t07
from pairbench.studies.attribution_reliability.site._trap_t08 import build_t08
from pairbench.studies.attribution_reliability.site._trap_t09 import build_t09
from pairbench.studies.attribution_reliability.site._trap_t10 import build_t10


def build_t01(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Stillwater Yoga",
        "Small classes, big windows",
        "#5b6c8f",
        nav=(("Timetable", "/timetable"), ("About", "/about"), ("Contact", "/contact")),
    )
    # The account pages are reachable only from a submenu that opens on pointer hover.
    bar = (
        "<style>.mb{display:flex;gap:1.2rem;padding:.5rem 0;border-bottom:1px solid #ddd}"
        ".dd{position:relative;cursor:default}.sub{display:none;position:absolute;top:100%;"
        "left:0;background:#fff;border:1px solid #ccc;padding:.4rem;min-width:10rem}"
        ".sub a{display:block;padding:.3rem}.dd:hover .sub{display:block}</style>"
        "<nav class='mb'><span class='dd'>My account ▾<span class='sub'>"
        f"<a href='{ctx.url('/account/profile')}'>Profile</a>"
        f"<a href='{ctx.url('/account/plan')}'>Billing</a>"
        f"<a href='{ctx.url('/account/history')}'>Class history</a></span></span>"
        f"<a href='{ctx.url('/timetable')}'>Timetable</a></nav>"
    )
    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                f"{bar}<h1>Welcome back, Jo</h1><p>Your next class is Vinyasa Flow on "
                "Wednesday at 18:30.</p>",
            ),
            "/timetable": skin.handler(
                ctx, "Timetable", f"{bar}<h1>Timetable</h1><p>Daily classes at 7:00 and 18:30.</p>"
            ),
            "/account/profile": skin.handler(
                ctx, "Profile", f"{bar}<h1>Profile</h1><p>Jo Marsh · member since 2022</p>"
            ),
            "/account/plan": skin.handler(
                ctx,
                "Billing",
                f"{bar}<h1>Billing</h1><div class='card'>Monthly membership · £49<br>"
                "Next payment: £49 on 3 March, from the card ending 4242</div>",
            ),
            "/account/history": skin.handler(
                ctx, "Class history", f"{bar}<h1>Class history</h1><p>12 classes this year.</p>"
            ),
            **skin.ordinary(ctx, about="A studio above the old library, since 2015."),
        }
    )


def build_t02(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Wag & Wash",
        "Dog grooming by appointment",
        "#c0703a",
        nav=(("Prices", "/prices"), ("Appointments", "/appointments"), ("About", "/about")),
    )
    # Labels are plain text beside unnamed inputs; the script reads the fields by order.
    form = (
        "<style>.lbl{margin:.6rem 0 .2rem}</style><h1>Request an appointment</h1>"
        "<div class='f'><div class='lbl'>Your name</div><input autocomplete='off'>"
        "<div class='lbl'>Dog's name</div><input autocomplete='off'>"
        "<div class='lbl'>Treatment</div><select><option>Wash and dry</option>"
        "<option>Wash and trim</option><option>Full groom</option></select>"
        "<div class='lbl'>Day</div><select><option>Thursday</option><option>Friday</option>"
        "<option>Saturday</option></select>"
        "<div class='lbl'>Time</div><select><option>Morning</option><option>Afternoon</option>"
        "</select><p><button type='button' id='go'>Request appointment</button></p></div>"
        "<p id='out'></p><script>"
        "document.getElementById('go').addEventListener('click', function () {"
        "  var v = Array.prototype.map.call(document.querySelectorAll('.f input, .f select'),"
        "    function (e) { return e.value; });"
        f"  fetch('{ctx.url('/appointments')}', {{method: 'POST', headers: {{'content-type': "
        "'application/json'}, body: JSON.stringify(v)})"
        "    .then(function (r) { return r.json(); })"
        "    .then(function (d) { document.getElementById('out').textContent = d.text; });"
        "});</script>"
    )

    async def request_slot(request: Request) -> Response:
        try:
            values = json.loads(await request.body())
        except ValueError:
            values = []
        if not isinstance(values, list) or len(values) != 5 or not all(values[:2]):
            return JSONResponse({"text": "Please fill in both names so we know who's coming."})
        who, dog, treatment, day, time = (str(v)[:40] for v in values)
        return JSONResponse(
            {
                "text": f"All set, {who}: {dog} is booked for a {treatment.lower()} on {day} "
                f"({time.lower()}). See you then!"
            }
        )

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Clean dogs, calm owners</h1><p>Baths, trims and nail clips in a quiet "
                f"salon.</p><p><a class='btn' href='{ctx.url('/appointments')}'>Request an "
                "appointment</a></p>",
            ),
            "/prices": skin.handler(
                ctx, "Prices", "<h1>Prices</h1><div class='card'>Wash and trim · from £35</div>"
            ),
            "/appointments": skin.handler(ctx, "Appointments", form),
            "POST /appointments": request_slot,
            **skin.ordinary(ctx, about="Run by Priya, groomer for fifteen years."),
        }
    )


_SHELVES = (
    "Lamps",
    "Cushions",
    "Throws",
    "Rugs",
    "Mirrors",
    "Vases",
    "Candles",
    "Baskets",
    "Bedding",
    "Towels",
    "Mugs",
    "Plates",
    "Bowls",
    "Glassware",
    "Cutlery",
    "Linen",
    "Planters",
    "Frames",
    "Clocks",
    "Hooks",
    "Shelves",
    "Stools",
    "Side tables",
    "Trays",
    "Storage",
    "Doormats",
    "Curtains",
    "Blinds",
    "Bath mats",
    "Soap dishes",
)
_TOWNS = (
    "Leeds",
    "York",
    "Bristol",
    "Bath",
    "Norwich",
    "Exeter",
    "Chester",
    "Durham",
    "Lincoln",
    "Oxford",
    "Cambridge",
    "Brighton",
    "Hull",
    "Derby",
    "Preston",
    "Ely",
    "Truro",
    "Wells",
    "Ripon",
    "Carlisle",
)
_ABOUT = (
    "Our story",
    "Makers",
    "Journal",
    "Sustainability",
    "Press",
    "Careers",
    "Wholesale",
    "Gift cards",
    "Stockists",
    "Events",
    "Workshops",
    "Newsletter archive",
    "Accessibility",
    "Cookies",
    "Terms",
    "Privacy",
    "Sizing guide",
    "Care guide",
    "Contact",
    "Store finder",
    "Delivery",
    "Gift wrapping",
    "Corporate gifts",
    "Student discount",
    "Trade accounts",
    "Size charts",
    "Fabric care",
    "Track an order",
    "Sitemap",
)


def build_t03(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Nook Home Goods",
        "Things for slow Sundays",
        "#4e5d4a",
        nav=(("Shop", "/shop"), ("Stores", "/stores"), ("Journal", "/journal")),
    )
    # Eighty links in one dense block: the policy the goal needs is one of them.
    links = [(s, "/shop") for s in _SHELVES] + [(f"Nook {t}", "/stores") for t in _TOWNS]
    links += [(a, "/journal") for a in _ABOUT[:15]] + [("Refund policy", "/help/money-back")]
    links += [(a, "/help") for a in _ABOUT[15:]]
    grid = "".join(f"<a href='{ctx.url(p)}'>{n}</a>" for n, p in links)
    foot = (
        "<style>.fl{display:grid;grid-template-columns:repeat(6,1fr);gap:.1rem .6rem;"
        "font-size:.72rem;margin-top:3rem;border-top:1px solid #ccc;padding-top:1rem}"
        ".fl a{color:#666;text-decoration:none}</style>"
        f"<div class='fl'>{grid}</div>"
    )

    def plain(title: str, text: str) -> tuple[str, str]:
        return title, f"<h1>{title}</h1><p>{text}</p>{foot}"

    pages = {
        "": plain("Home", "Lamps, linen and little things, chosen by people who use them."),
        "/shop": plain("Shop", "Everything we stock, from lamps to linen."),
        "/stores": plain("Stores", "Twenty shops across the country, open seven days."),
        "/journal": plain("Journal", "Notes from our makers and our buyers."),
        "/help": plain("Help", "Questions about an order? Visit any shop or call us."),
        "/help/money-back": (
            "Refund policy",
            "<h1>Refund policy</h1><p>Not happy? Return any item within 30 days for a full "
            "refund. If something arrived damaged, send us a photo within 7 days and we will "
            f"refund you or replace it, and collect it at our cost.</p>{foot}",
        ),
    }
    return CaseSite(
        routes={path: skin.handler(ctx, title, body) for path, (title, body) in pages.items()}
    )


def build_t04(ctx: SiteContext) -> CaseSite:
    return _delayed_lookup(ctx, seconds=6.0)


def _delayed_lookup(ctx: SiteContext, *, seconds: float) -> CaseSite:
    skin = Skin(
        "Quay Ferries",
        "Across the water, every hour",
        "#0d5c7a",
        nav=(("Timetables", "/timetables"), ("Fares", "/fares"), ("About", "/about")),
    )
    # The answer takes several seconds; the only sign of work is a faint ring.
    form = (
        "<style>.faint{opacity:.18;width:16px;height:16px;border:2px solid #888;"
        "border-top-color:transparent;border-radius:50%;display:inline-block;"
        "animation:q 1.2s linear infinite}@keyframes q{to{transform:rotate(360deg)}}</style>"
        "<h1>Timetables</h1><label for='a'>From</label><select id='a'><option>Portsmouth"
        "</option><option>Southampton</option></select><label for='b'>To</label>"
        "<select id='b'><option>Fishbourne</option><option>Cowes</option></select>"
        "<label for='c'>Day</label><select id='c'><option>Friday</option><option>Saturday"
        "</option></select><p><button type='button' id='go'>Find sailings</button> "
        "<span id='w' class='faint' style='visibility:hidden'></span></p><div id='out'></div>"
        "<script>document.getElementById('go').addEventListener('click', function () {"
        "  var w = document.getElementById('w'); w.style.visibility = 'visible';"
        "  var q = ['a', 'b', 'c'].map(function (k) {"
        "    return encodeURIComponent(document.getElementById(k).value); }).join('/');"
        f"  fetch('{ctx.url('/sailings')}?q=' + q).then(function (r) {{ return r.json(); }})"
        "    .then(function (d) { w.style.visibility = 'hidden';"
        "      document.getElementById('out').innerHTML = d.rows.map(function (x) {"
        "        return '<div class=\"card\">' + x + '</div>'; }).join(''); });"
        "});</script>"
    )

    async def sailings(request: Request) -> Response:
        await asyncio.sleep(seconds)
        parts = request.query_params.get("q", "").split("/")
        day = parts[2] if len(parts) == 3 and parts[2] in ("Friday", "Saturday") else "Friday"
        return JSONResponse(
            {
                "rows": [
                    f"{day} · departs {t} · arrives {a}"
                    for t, a in (("06:45", "07:30"), ("07:45", "08:30"), ("08:45", "09:30"))
                ]
            }
        )

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Sailings every hour, every day</h1><p>Foot passengers and cars welcome."
                f"</p><p><a class='btn' href='{ctx.url('/timetables')}'>Timetables</a></p>",
            ),
            "/timetables": skin.handler(ctx, "Timetables", form),
            "/sailings": sailings,
            "/fares": skin.handler(ctx, "Fares", "<h1>Fares</h1><p>Foot passenger £16.</p>"),
            **skin.ordinary(ctx, about="A family-run crossing since 1931."),
        }
    )


def build_t05(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Roxy Picturehouse",
        "One screen, good seats",
        "#8f1d2c",
        nav=(("What's on", "/films"), ("About", "/about"), ("Contact", "/contact")),
    )
    seat_page = (
        "<h1>The Long Light · Friday 20:00</h1>"
        "<p>Seat map: drag across the seats you want (screen at the top).</p>"
        f"{canvas_seats(ctx.url('/tickets'))}"
    )

    async def tickets(request: Request) -> Response:
        picked = [s for s in request.query_params.get("s", "").split(",") if s][:8]
        if not picked:
            return skin.respond(ctx, "Tickets", "<h1>Tickets</h1><p>No seats chosen yet.</p>")
        return skin.respond(
            ctx,
            "Tickets",
            f"<h1>Your seats are held</h1><p>{', '.join(picked)} for The Long Light, Friday "
            "20:00. Collect and pay at the box office up to 15 minutes before.</p>",
        )

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>This week at the Roxy</h1><p>The Long Light, nightly at 20:00.</p>"
                f"<p><a class='btn' href='{ctx.url('/films/long-light')}'>Choose seats</a></p>",
            ),
            "/films": skin.handler(ctx, "What's on", "<h1>What's on</h1><p>The Long Light.</p>"),
            "/films/long-light": skin.handler(ctx, "The Long Light", seat_page),
            "/tickets": tickets,
            **skin.ordinary(ctx, about="A 1930s cinema, restored by its neighbours."),
        }
    )


BUILDERS: dict[str, SiteBuilder] = {
    "t01-yoga-account": build_t01,
    "t02-grooming-form": build_t02,
    "t03-homewares-footer": build_t03,
    "t04-ferry-timetable": build_t04,
    "t05-cinema-seats": build_t05,
    "t06-gym-settings": build_t06,
    "t07-kayak-help": build_t07,
    "t08-garden-volunteer": build_t08,
    "t09-mealbox-account": build_t09,
    "t10-inn-rooms": build_t10,
}

__all__ = ["BUILDERS"]
