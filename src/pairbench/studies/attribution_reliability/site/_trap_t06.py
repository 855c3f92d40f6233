"""The hard-but-working site T06: saving shows a confirmation for 1.5 seconds; the value persists
and shows after reload."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext
from pairbench.studies.attribution_reliability.site._skin import Skin


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
