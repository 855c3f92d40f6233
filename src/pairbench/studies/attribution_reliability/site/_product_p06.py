"""The product-failure site P06: a transparent fixed layer covers the bottom bar, so clicks meant
for its submit control land on the layer."""

from __future__ import annotations

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext
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
