"""The hard-but-working site T08: the volunteer form's submit button sits about 3,000 px below the
first screen."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext, esc
from pairbench.studies.attribution_reliability.site._skin import Skin, form_fields


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
