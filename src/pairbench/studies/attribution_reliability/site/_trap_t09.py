"""The hard-but-working site T09: the weekly day changes only through an icon-only pencil button
without a text label."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext
from pairbench.studies.attribution_reliability.site._skin import Skin, form_fields

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
