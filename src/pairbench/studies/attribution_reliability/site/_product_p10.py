"""The product-failure site P10: the home page promises per-postcode delivery timing that the
delivery page does not give."""

from __future__ import annotations

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext
from pairbench.studies.attribution_reliability.site._skin import Skin


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
