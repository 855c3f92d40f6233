"""Calibration skins of six environment and epistemic mechanisms: other businesses, other
words, the same mechanism (a 403 that the webdriver cookie alone triggers, an email field,
sign-in on another host, a 28 s search, a guessed route that is missing, a number that is
nowhere).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability.site._environment import search_home, slow_search
from pairbench.studies.attribution_reliability.site._epistemic import not_found
from pairbench.studies.attribution_reliability.site._kit import (
    CaseSite,
    Handler,
    SiteBuilder,
    SiteContext,
    esc,
    page,
)
from pairbench.studies.attribution_reliability.site._skin import Skin
from pairbench.studies.attribution_reliability.site._skin_ex import (
    field,
    form_page,
    html,
    posted,
    shell,
)

PROBE_COOKIE = "sid2"
"""The cookie ``WEBDRIVER_PROBE`` sets; the C-E02 gate reads it and ignores the UA."""


def _cookie_gate(open_markup: str, blocked: str) -> Handler:
    # Unlike the server's mark (user agent *or* cookie), this gate looks at the cookie only,
    # so an automated browser presenting an ordinary desktop user agent still meets it.
    async def handler(request: Request) -> Response:
        if request.cookies.get(PROBE_COOKIE) == "1":
            return HTMLResponse(blocked, status_code=403)
        return HTMLResponse(open_markup)

    return handler


def build_c_e02(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Alder Street Opticians",
        "Eye care on Alder Street",
        "#5b4a7a",
        nav=(("Eye tests", "/eye-tests"), ("Frames", "/frames")),
    )
    frames = shell(
        ctx, skin, "Frames",
        "<h1>Frames</h1><p>Over two hundred frames to try on.</p><ul>"
        "<li>Acetate, tortoiseshell, from 89</li><li>Titanium, rimless, from 149</li>"
        "<li>Children's frames, free with a voucher</li></ul>",
    )  # fmt: skip
    blocked = page(
        skin.name,
        "<h1>Forbidden</h1><p>403: this request was refused by the server.</p>"
        f'<p><a href="{esc(ctx.url())}">Home</a></p>',
    )
    home = "<h1>Eye care on Alder Street</h1><p>Walk-in eye tests most afternoons.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/eye-tests": html(shell(ctx, skin, "Eye tests", "<h1>Eye tests</h1>"
                                     "<p>Thirty minutes, no appointment.</p>")),
            "/frames": _cookie_gate(frames, blocked),
        },
        automation_gate=True,
    )  # fmt: skip


def build_c_e05(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Wildflower Seed Co",
        "Seeds for bees and borders",
        "#5f7a2c",
        nav=(("Seeds", "/seeds"), ("Free guide", "/guide")),
    )
    guide = form_page(ctx, skin, "Free planting guide",
                      "Join the newsletter and the month-by-month guide opens straight away.",
                      "/guide", field("Email address", "addr", "email"),
                      "Open the guide")  # fmt: skip
    done = (
        "<h1>Your sowing calendar</h1><ul><li>March: sweet peas indoors</li>"
        "<li>April: poppies and cornflowers outside</li><li>May: sunflowers</li></ul>"
    )
    home = "<h1>Seeds for bees and borders</h1><p>Native wildflowers, packed by hand.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/seeds": html(shell(ctx, skin, "Seeds", "<h1>Seeds</h1>"
                                 "<p>Meadow mixes and single packets.</p>")),
            "/guide": html(guide),
            "POST /guide": posted(ctx, skin, ("addr",), done),
        },
    )  # fmt: skip


def build_c_e08(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Pebble Laundry",
        "Laundry, collected and returned",
        "#3a6f8f",
        nav=(("How it works", "/how"), ("Pickups", "/pickups")),
    )
    login_url = f"{ctx.other_origin}{ctx.url('/login')}"
    pickups = (
        "<h1>Your pickups</h1><p>Collection times for your bags live in your Pebble pass."
        f'</p><p><a href="{esc(login_url)}">Log in with Pebble pass</a></p>'
    )
    login = Skin("Pebble", "Your laundry, your account", "#3a6f8f", home="/login").render(
        ctx, "Welcome",  # a target term in the title would be outside visible text
        "<h1>Log in</h1>" + field("Email", "user", "email")
        + field("Password", "secret", "password") + "<button>Continue</button>",
    )  # fmt: skip
    home = "<h1>Laundry, collected and returned</h1><p>Folded and back in two days.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/how": html(shell(ctx, skin, "How it works", "<h1>How it works</h1>"
                               "<p>Bag it, leave it out, we do the rest.</p>")),
            "/pickups": html(shell(ctx, skin, "Pickups", pickups)),
        },
        other_routes={"/login": html(login)},
    )  # fmt: skip


def build_c_e10(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Eastbrook Library",
        "Books, audiobooks and films",
        "#2f5d50",
        nav=(("Home", ""), ("Opening times", "/times")),
    )
    items = {
        "the salt path": "The Salt Path, Raynor Winn &middot; 2 copies on the shelf",
        "middlemarch": "Middlemarch, George Eliot &middot; on loan until the 14th",
        "the hobbit": "The Hobbit, J. R. R. Tolkien &middot; 1 copy on the shelf",
    }
    intro = "<h1>The catalogue</h1><p>Books, audiobooks and films for every member.</p>"
    return CaseSite(
        routes={
            "": html(search_home(ctx, skin, intro, "/catalogue")),
            "/catalogue": slow_search(ctx, skin, items),
            "/times": html(shell(ctx, skin, "Opening times", "<h1>Opening times</h1>"
                                 "<p>Tuesday to Saturday, ten till five.</p>")),
        },
        automation_gate=True,
    )  # fmt: skip


def build_c_x03(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Pawprint Walkers",
        "Happy dogs, tired dogs",
        "#8a5a2c",
        nav=(("About us", "/about"), ("Rates", "/rates")),
    )
    rates = (
        "<h1>Rates</h1>"
        '<div class="card"><b>Half-hour walk</b>: 11 per dog</div>'
        '<div class="card"><b>Hour walk</b>: 18 per dog</div>'
        '<div class="card"><b>Puppy visit</b>: 9</div>'
    )
    home = "<h1>Happy dogs, tired dogs</h1><p>Small groups, local parks, every weekday.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/about": html(shell(ctx, skin, "About us", "<h1>About us</h1>"
                                 "<p>Three walkers, all first-aid trained.</p>")),
            "/rates": html(shell(ctx, skin, "Rates", rates)),
            "/prices": not_found(ctx, skin),
        },
    )  # fmt: skip


def build_c_x05(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Marigold Physio",
        "Back on your feet",
        "#b0702c",
        nav=(("Treatments", "/treatments"), ("Get in touch", "/touch")),
    )
    touch = (
        "<h1>Get in touch</h1><p>Send a note to team@marigold.example; we reply the same day."
        "</p><p>Clinic: first floor, Old Post Office, Market Square.</p>"
    )
    home = "<h1>Back on your feet</h1><p>Sports injuries, back pain and rehab.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/treatments": html(shell(ctx, skin, "Treatments", "<h1>Treatments</h1>"
                                      "<p>Massage, acupuncture, exercise plans.</p>")),
            "/touch": html(shell(ctx, skin, "Get in touch", touch)),
        },
    )  # fmt: skip


BUILDERS: dict[str, SiteBuilder] = {
    "c-e02-opticians-frames": build_c_e02,
    "c-e05-seed-guide": build_c_e05,
    "c-e08-laundry-pickups": build_c_e08,
    "c-e10-library-catalogue": build_c_e10,
    "c-x03-dogwalker-rates": build_c_x03,
    "c-x05-physio-touch": build_c_x05,
}
