"""The hard-but-working site T10: the room choice is a custom list of divs instead of a native
select element."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext, esc
from pairbench.studies.attribution_reliability.site._skin import Skin


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
