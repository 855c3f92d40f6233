"""The hard-but-working site T07: answers sit in a custom collapsed list of plain divs that open on
click, without ARIA."""

from __future__ import annotations

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext
from pairbench.studies.attribution_reliability.site._skin import Skin


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
