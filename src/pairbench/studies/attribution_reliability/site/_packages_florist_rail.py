"""Sites for the evidence packages: a florist (whose checkout button, postcode check and
invoice download all fail) and a rail timetable behind a bot wall."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability.site._kit import (
    CaseSite,
    SiteContext,
    esc,
)
from pairbench.studies.attribution_reliability.site._package_page import doc, static


@dataclass(frozen=True)
class FloristSkin:
    brand: str
    intro: str
    bouquets: tuple[tuple[str, str, str], ...]
    """(query key, name, price)."""
    continue_label: str
    area: str
    error_ref: str


def florist(skin: FloristSkin, ctx: SiteContext) -> CaseSite:
    """Bouquets, a basket whose continue button has no effect, a postcode check whose
    pattern refuses real postcodes, and orders whose invoice link answers 500."""
    nav = [
        ("", "Home"),
        ("/bouquets", "Bouquets"),
        ("/basket", "Basket"),
        ("/areas", "Delivery"),
        ("/orders", "Your orders"),
    ]
    view = partial(doc, ctx, skin.brand, nav)
    names = {key: (name, price) for key, name, price in skin.bouquets}
    listing = "".join(
        f"<li>{esc(name)} {esc(price)} "
        f'<a href="{ctx.url("/basket")}?item={key}">Add {esc(name)}</a></li>'
        for key, name, price in skin.bouquets
    )

    async def basket(request: Request) -> Response:
        key = request.query_params.get("item", skin.bouquets[0][0])
        name, price = names.get(key, names[skin.bouquets[0][0]])
        body = (
            f"<p>In your basket: <strong>{esc(name)}</strong>, {esc(price)}.</p>"
            f"<p><button type=button id=next>{esc(skin.continue_label)}</button></p>"
            # The handler leaves before doing anything: no request, no change on screen.
            "<script>document.getElementById('next').addEventListener('click',"
            "function(e){if(e){return;}location.href='#';});</script>"
        )
        return HTMLResponse(view("Basket", body))

    postcode = (
        f"<p>We deliver across {esc(skin.area)}. Check your address first.</p>"
        "<label for=pc>Postcode</label><input id=pc autocomplete=off>"
        "<p><button type=button id=pcgo>Check delivery</button></p>"
        "<p id=pcout role=status aria-live=polite></p>"
        "<script>document.getElementById('pcgo').addEventListener('click',function(){"
        "var v=document.getElementById('pc').value.trim().toUpperCase();"
        "document.getElementById('pcout').textContent=/^[A-Z]{2}[0-9]{3}$/.test(v)"
        # The refusal names the field by its visible label, so the word lives in copy only.
        "?'Good news, we deliver there.':'Please enter a valid '+"
        "document.querySelector('label[for=pc]').textContent.toLowerCase()+'.';});</script>"
    )
    orders = (
        "<ul><li>Order 2291, 14 March, "
        f'<a href="{ctx.url("/orders/pdf")}?n=2291">Download invoice</a></li></ul>'
    )
    failure = doc(
        ctx,
        skin.brand,
        nav,
        "Sorry",
        f"<p>Something went wrong on our side. Reference {esc(skin.error_ref)}.</p>",
    )
    return CaseSite(
        routes={
            "": static(view(skin.brand, f"<p>{esc(skin.intro)}</p>")),
            "/bouquets": static(view("Bouquets", f"<ul>{listing}</ul>")),
            "/basket": basket,
            "/areas": static(view("Delivery", postcode)),
            "/orders": static(view("Your orders", orders)),
            "/orders/pdf": static(failure, status=500),
        }
    )


FERN = FloristSkin(
    brand="Fern & Stem",
    intro="Seasonal bouquets tied by hand and delivered the same day.",
    bouquets=(
        ("spring", "Spring mix", "£32"),
        ("roses", "Red roses", "£45"),
        ("meadow", "Meadow posy", "£28"),
    ),
    continue_label="Continue to delivery",
    area="Edinburgh",
    error_ref="7731",
)

LANTERN = FloristSkin(
    brand="Paper Lantern Gifts",
    intro="Gift boxes, dried flowers and cards, packed to order.",
    bouquets=(
        ("dried", "Dried lavender box", "£24"),
        ("peony", "Silk peonies", "£38"),
    ),
    continue_label="Continue to payment",
    area="Bristol",
    error_ref="4406",
)


def timetable(ctx: SiteContext) -> CaseSite:
    """A rail line's timetable search; automated browsers get a 403 wall on results."""
    nav = [("", "Home"), ("/about", "About")]
    view = partial(doc, ctx, "Harbour Line", nav)
    form = (
        f'<form action="{ctx.url("/search")}" method=get>'
        "<label for=to>Destination</label><input id=to name=q autocomplete=off>"
        "<button>Find trains</button></form>"
    )

    async def search(request: Request) -> Response:
        if request.state.automated:
            wall = view("Access denied", "<p>Access denied: we could not verify your browser.</p>")
            return HTMLResponse(wall, status_code=403)
        where = esc(request.query_params.get("q", "") or "Kingsport")
        body = f"<p>Next trains to {where}: 09:12, 09:42, 10:12.</p>"
        return HTMLResponse(view("Trains", body))

    return CaseSite(
        routes={
            "": static(view("Harbour Line", form)),
            "/search": search,
            "/about": static(view("About", "<p>Trains every half hour along the coast.</p>")),
        },
        automation_gate=True,
    )
