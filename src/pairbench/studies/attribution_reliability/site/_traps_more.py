"""The second half of the hard-but-working sites (T06..T10), and the drag-to-pick seat
canvas that T05 and its calibration variant share; ``_traps`` registers them."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext, esc
from pairbench.studies.attribution_reliability.site._skin import Skin, form_fields


def canvas_seats(action: str, *, colour: str = "#8f1d2c", button: str = "Continue") -> str:
    """A seat plan drawn on a canvas: a plain click picks nothing, a drag picks every free
    seat the pointer crosses. The picked seats go to ``action`` as ``?s=F7,F8``."""
    return (
        "<canvas id='cv' width='440' height='330' style='border:1px solid #ccc;"
        "cursor:crosshair'></canvas><p>Your seats: <strong id='sel'>none</strong></p>"
        f"<form action='{action}'><input type='hidden' name='s' id='s'>"
        f"<button id='c' disabled>{esc(button)}</button></form>"
        "<script>var cv = document.getElementById('cv'), g = cv.getContext('2d');"
        "var rows = 'ABCDEFGH', n = 12, size = 34, y0 = 40, x0 = 26;"
        "var taken = {D5: 1, D6: 1, E9: 1, F3: 1}, picked = [], down = null;"
        "function draw() { g.clearRect(0, 0, cv.width, cv.height);"
        "  g.fillStyle = '#bbb'; g.fillRect(x0, 8, n * size - 6, 10);"
        "  g.font = '12px sans-serif';"
        "  for (var r = 0; r < rows.length; r++) { g.fillStyle = '#333';"
        "    g.fillText(rows[r], 6, y0 + r * size + 18);"
        "    for (var c = 0; c < n; c++) { var id = rows[r] + (c + 1);"
        "      g.fillStyle = taken[id] ? '#777' : (picked.indexOf(id) >= 0 ? "
        f"'{colour}' : '#e3d7c8');"
        "      g.fillRect(x0 + c * size, y0 + r * size, size - 6, size - 6); } } }"
        "function at(e) { var b = cv.getBoundingClientRect();"
        "  var c = Math.floor((e.clientX - b.left - x0) / size);"
        "  var r = Math.floor((e.clientY - b.top - y0) / size);"
        "  if (c < 0 || r < 0 || c >= n || r >= rows.length) { return null; }"
        "  return rows[r] + (c + 1); }"
        "function add(id) { if (id && !taken[id] && down.list.indexOf(id) < 0) {"
        "  down.list.push(id); } }"
        "cv.addEventListener('mousedown', function (e) {"
        "  down = {x: e.clientX, y: e.clientY, moved: false, list: []}; add(at(e)); });"
        "cv.addEventListener('mousemove', function (e) { if (!down) { return; }"
        "  if (Math.abs(e.clientX - down.x) + Math.abs(e.clientY - down.y) > 6) {"
        "    down.moved = true; }"
        "  if (down.moved) { add(at(e)); picked = down.list.slice(); draw(); } });"
        "window.addEventListener('mouseup', function () { if (!down) { return; }"
        "  if (down.moved && down.list.length) { picked = down.list.slice();"
        "    document.getElementById('sel').textContent = picked.join(', ');"
        "    document.getElementById('s').value = picked.join(',');"
        "    document.getElementById('c').disabled = false; }"
        "  down = null; draw(); });"
        "draw();</script>"
    )


def build_t06(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Ironbark Gym",
        "Open 5am to 11pm",
        "#3a3a3a",
        nav=(("Classes", "/classes"), ("Settings", "/settings"), ("About", "/about")),
    )
    choices = ("Morning, 7am", "Lunchtime, 12pm", "Evening, 6pm")
    state = {"t": choices[0]}

    async def settings(_request: Request) -> Response:
        options = "".join(
            f"<option{' selected' if c == state['t'] else ''}>{c}</option>" for c in choices
        )
        # The only confirmation is a small note that fades after a second and a half.
        main = (
            "<h1>Settings</h1><label for='rt'>Class reminders</label>"
            f"<select id='rt'>{options}</select><p><button type='button' id='sv'>Save changes"
            "</button></p><div id='ok' style='display:none;position:fixed;right:1rem;"
            "bottom:1rem;background:#333;color:#fff;padding:.3rem .7rem;font-size:.8rem;"
            "border-radius:4px'>Saved</div>"
            "<script>document.getElementById('sv').addEventListener('click', function () {"
            f"  fetch('{ctx.url('/settings/reminders')}', {{method: 'POST', headers: "
            "{'content-type': 'application/json'}, body: JSON.stringify({t: "
            "document.getElementById('rt').value})}).then(function (r) {"
            "    if (r.ok) { var ok = document.getElementById('ok'); ok.style.display = 'block';"
            "      setTimeout(function () { ok.style.display = 'none'; }, 1500); } });"
            "});</script>"
        )
        return skin.respond(ctx, "Settings", main)

    async def read(_request: Request) -> Response:
        return JSONResponse({"t": state["t"]})

    async def write(request: Request) -> Response:
        try:
            value = json.loads(await request.body()).get("t")
        except (ValueError, AttributeError):
            value = None
        if value not in choices:
            return JSONResponse({"t": state["t"]}, status_code=400)
        state["t"] = str(value)
        return JSONResponse({"t": state["t"]})

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Hi, Chris</h1><p>Your next class: Circuits, Thursday 18:00.</p>",
            ),
            "/classes": skin.handler(
                ctx, "Classes", "<h1>Classes</h1><p>Circuits, spin, yoga.</p>"
            ),
            "/settings": settings,
            "/settings/reminders": read,
            "POST /settings/reminders": write,
            **skin.ordinary(ctx, about="An independent gym in a former tram shed."),
        }
    )


def build_t07(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Riverbend Kayaks",
        "Guided paddles on the Wye",
        "#2e6f5e",
        nav=(("Trips", "/trips"), ("FAQ", "/help"), ("About", "/about")),
    )
    faq = (
        ("What should I wear?", "Clothes that can get wet, and shoes you can paddle in."),
        (
            "Can children paddle with us?",
            "Yes. Children aged 8 and over can share a double "
            "kayak with an adult; the minimum age for a solo kayak is 14.",
        ),
        ("Do I need to be able to swim?", "Yes, 25 metres. Everyone wears a buoyancy aid."),
        ("What if it rains?", "We paddle in the rain; we cancel only for high water."),
    )
    # Plain divs that toggle on click, with nothing announcing them as expandable.
    items = "".join(
        f"<div class='q'>{q}</div><div class='a' style='display:none'>{a}</div>" for q, a in faq
    )
    page = (
        "<style>.q{padding:.7rem;border-bottom:1px solid #ddd;cursor:pointer;font-weight:600}"
        ".a{padding:.5rem .7rem 1rem}</style><h1>FAQ</h1>"
        f"{items}<script>document.querySelectorAll('.q').forEach(function (q) {{"
        "  q.addEventListener('click', function () { var a = q.nextElementSibling;"
        "    a.style.display = a.style.display === 'none' ? 'block' : 'none'; }); });</script>"
    )
    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Paddle the Wye with us</h1><p>Half-day and full-day guided trips from "
                "April to October. Kayaks, paddles and buoyancy aids included.</p>",
            ),
            "/trips": skin.handler(
                ctx, "Trips", "<h1>Trips</h1><div class='card'>Half day · £45 per adult</div>"
            ),
            "/help": skin.handler(ctx, "FAQ", page),
            **skin.ordinary(ctx, about="Guides who grew up on the river."),
        }
    )


def build_t08(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Greenway Community Garden",
        "Grow food with your neighbours",
        "#4f7f2f",
        nav=(("Volunteer", "/volunteer"), ("Open days", "/open-days"), ("About", "/about")),
    )
    guide = "".join(
        f"<h3>{t}</h3><p style='margin-bottom:42rem'>{x}</p>"
        for t, x in (
            ("Tools", "Tools live in the green shed; please clean them before you put them back."),
            ("Watering", "Water early or late in the day, at the roots, never the leaves."),
            ("Harvest", "What you grow is shared among everyone who helped that month."),
            ("Safety", "Gloves are in the blue box. Tell a coordinator about any injury."),
        )
    )
    # The submit button sits below a long guide, far under the first screen.
    form = (
        "<h1>Volunteer with us</h1><p>Tell us when you can help, then read our short guide."
        f"</p><form method='post' action='{ctx.url('/volunteer')}'><label for='n'>Your name"
        "</label><input id='n' name='n' autocomplete='off'><p>Days you can help:</p>"
        "<label><input type='checkbox' name='d' value='Saturday'> Saturday</label>"
        "<label><input type='checkbox' name='d' value='Sunday'> Sunday</label>"
        f"<h2>Our guide</h2>{guide}<p><button>Send application</button></p></form>"
    )

    async def apply(request: Request) -> Response:
        name = (await form_fields(request)).get("n", "").strip()[:40] or "friend"
        return skin.respond(
            ctx,
            "Thank you",
            f"<h1>Thank you, {esc(name)}!</h1><p>We'll see you at the green shed on "
            "Saturday at 10am for a welcome tour.</p>",
        )

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>A garden for everyone</h1><p>Forty raised beds, an orchard and a pond, "
                f"looked after by volunteers.</p><p><a class='btn' href='{ctx.url('/volunteer')}'>"
                "Volunteer with us</a></p>",
            ),
            "/volunteer": skin.handler(ctx, "Volunteer", form),
            "POST /volunteer": apply,
            "/open-days": skin.handler(
                ctx, "Open days", "<h1>Open days</h1><p>First Saturday of each month.</p>"
            ),
            **skin.ordinary(ctx, about="Started on a car park in 2011."),
        }
    )


_PENCIL = (
    "<svg width='16' height='16' viewBox='0 0 16 16'><path d='M2 12l8-8 2 2-8 8H2z' "
    "fill='currentColor'/></svg>"
)


def build_t09(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Hearth Box",
        "Weekly meal kits",
        "#a0522d",
        nav=(("Menus", "/menus"), ("Account", "/account"), ("About", "/about")),
    )
    days = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
    state = {"day": "Monday"}

    async def account(_request: Request) -> Response:
        options = "".join(
            f"<option{' selected' if d == state['day'] else ''}>{d}</option>" for d in days
        )
        # The only way to change the day is an unlabelled icon button beside it.
        main = (
            "<h1>Your account</h1><div class='card'>Plan: 3 recipes for 2 people</div>"
            f"<div class='card'>Delivery day: <strong>{state['day']}</strong> "
            "<button type='button' id='pen' style='background:none;color:#555;padding:.2rem'>"
            f"{_PENCIL}</button><form id='ed' method='post' action='{ctx.url('/account')}' "
            f"style='display:none'><label for='dd'>New day</label><select id='dd' name='d'>"
            f"{options}</select> <button>Update</button></form></div>"
            "<script>document.getElementById('pen').addEventListener('click', function () {"
            "  document.getElementById('ed').style.display = 'block'; });</script>"
        )
        return skin.respond(ctx, "Account", main)

    async def change(request: Request) -> Response:
        day = (await form_fields(request)).get("d", "")
        if day in days:
            state["day"] = day
        return RedirectResponse(ctx.url("/account"), status_code=303)

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Dinner, sorted</h1><p>Fresh ingredients and easy recipes, every week.</p>",
            ),
            "/menus": skin.handler(ctx, "Menus", "<h1>This week</h1><p>Leek and bean pie.</p>"),
            "/account": account,
            "POST /account": change,
            **skin.ordinary(ctx, about="Cooks and growers from the Marches."),
        }
    )


def build_t10(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "The Gull Inn",
        "Rooms above the harbour",
        "#33658a",
        nav=(("Rooms", "/rooms"), ("Dining", "/dining"), ("About", "/about")),
    )
    rooms = ("Single, courtyard", "Double, courtyard", "Double, sea view", "Family suite")
    # A styled list of divs stands in for a select element.
    chooser = (
        "<style>.dl{position:relative;width:16rem}.dv{border:1px solid #999;padding:.4rem;"
        "background:#fff;cursor:pointer}.op{display:none;position:absolute;left:0;right:0;"
        "background:#fff;border:1px solid #999}.op div{padding:.4rem;cursor:pointer}"
        ".op div:hover{background:#eef}</style>"
        f"<h1>Rooms</h1><form action='{ctx.url('/availability')}'>"
        "<div class='lbl'>Room type</div><div class='dl'><div class='dv' id='dv'>Choose…"
        "</div><div class='op' id='op'>"
        + "".join(f"<div data-v='{i}'>{r}</div>" for i, r in enumerate(rooms))
        + "</div></div><input type='hidden' name='r' id='r'>"
        "<div class='lbl'>Night</div><select name='n'><option>13</option><option>14</option>"
        "<option>15</option></select> June"
        "<p><button>Check availability</button></p></form>"
        "<script>var op = document.getElementById('op'), dv = document.getElementById('dv');"
        "dv.addEventListener('click', function () {"
        "  op.style.display = op.style.display === 'block' ? 'none' : 'block'; });"
        "op.querySelectorAll('div').forEach(function (o) {"
        "  o.addEventListener('click', function () { dv.textContent = o.textContent;"
        "    document.getElementById('r').value = o.dataset.v; op.style.display = 'none'; });"
        "});</script>"
    )

    async def availability(request: Request) -> Response:
        raw = request.query_params.get("r", "")
        night = request.query_params.get("n", "14")
        if not raw.isdigit() or int(raw) >= len(rooms):
            return skin.respond(
                ctx, "Availability", "<h1>Availability</h1><p>Please choose a room type.</p>"
            )
        room = rooms[int(raw)]
        return skin.respond(
            ctx,
            "Availability",
            f"<h1>Good news</h1><p>{room}: free on the night of {esc(night[:2])} June, "
            "£120 including breakfast.</p>",
        )

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Sleep to the sound of the sea</h1><p>Eight rooms, a warm bar and "
                f"breakfast till eleven.</p><p><a class='btn' href='{ctx.url('/rooms')}'>Our "
                "rooms</a></p>",
            ),
            "/rooms": skin.handler(ctx, "Rooms", chooser),
            "/availability": availability,
            "/dining": skin.handler(ctx, "Dining", "<h1>Dining</h1><p>Fish, chips, more fish.</p>"),
            **skin.ordinary(ctx, about="An inn since 1780, rebuilt after the storm of 1953."),
        }
    )


__all__ = ["build_t06", "build_t07", "build_t08", "build_t09", "build_t10", "canvas_seats"]
