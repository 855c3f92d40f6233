"""The product-failure site P07: the order history's document link answers with a styled server
error page (status 500)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext
from pairbench.studies.attribution_reliability.site._skin import Skin


def build_p07(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Harbour Print Co.",
        "Business cards, flyers and posters",
        "#37474f",
        nav=(("Products", "/products"), ("My orders", "/orders"), ("About", "/about")),
    )
    orders = (
        "<h1>My orders</h1><p>Welcome back, Sam.</p>"
        "<div class='card'><h3>Order 4471 · 500 business cards</h3><p>Dispatched "
        "last Tuesday · £38.00</p>"
        f"<a class='btn' href='{ctx.url('/orders/4471/pdf')}'>Download invoice</a></div>"
        "<div class='card'><h3>Order 4390 · 100 A5 flyers</h3><p>Delivered in March · £24.00"
        "</p></div>"
    )

    async def pdf(_request: Request) -> Response:
        body = skin.render(
            ctx,
            "Something went wrong",
            "<div class='card' style='text-align:center'><h1>Sorry, something went wrong "
            "on our side</h1><p>Please try again later.</p><p class='note'>Reference "
            "7F3A-221</p></div>",
        )
        return HTMLResponse(body, status_code=500)

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Print that makes an impression</h1><p>Upload once, reorder any time. "
                "Your past orders are under My orders.</p>",
            ),
            "/products": skin.handler(
                ctx,
                "Products",
                "<h1>Products</h1><div class='card'>Business cards from £18</div>"
                "<div class='card'>A5 flyers from £15</div>",
            ),
            "/orders": skin.handler(ctx, "My orders", orders),
            "/orders/4471/pdf": pdf,
            **skin.ordinary(ctx, about="A print shop by the harbour since 1989."),
        }
    )
