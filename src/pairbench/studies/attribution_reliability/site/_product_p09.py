"""The product-failure site P09: every page of the stock list shows the first ten books, whatever
page is asked for."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from pairbench.studies.attribution_reliability.site._kit import CaseSite, SiteContext, esc
from pairbench.studies.attribution_reliability.site._skin import Skin

_BOOKS = (
    ("The Remains of the Day", "Kazuo Ishiguro"),
    ("Middlemarch", "George Eliot"),
    ("A Month in the Country", "J. L. Carr"),
    ("The Secret History", "Donna Tartt"),
    ("Cold Comfort Farm", "Stella Gibbons"),
    ("The Go-Between", "L. P. Hartley"),
    ("Rebecca", "Daphne du Maurier"),
    ("Stoner", "John Williams"),
    ("I Capture the Castle", "Dodie Smith"),
    ("The Hobbit", "J. R. R. Tolkien"),
)


def build_p09(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Dog-Ear Books",
        "Second-hand books, well loved",
        "#8b5a2b",
        nav=(("Books", "/books"), ("Sell to us", "/sell"), ("About", "/about")),
    )

    async def books(request: Request) -> Response:
        raw = request.query_params.get("p", "1")
        number = int(raw) if raw.isdigit() and 1 <= int(raw) <= 3 else 1
        # The shelf shown ignores the requested page: every page lists the first ten.
        rows = "".join(
            f"<div class='card'><strong>{esc(t)}</strong> · {esc(a)} · £4</div>" for t, a in _BOOKS
        )
        links = " ".join(f"<a href='{ctx.url('/books')}?p={n}'>{n}</a>" for n in (1, 2, 3))
        after = (
            f" <a href='{ctx.url('/books')}?p={number + 1}'>Next page →</a>" if number < 3 else ""
        )
        main = (
            f"<h1>In stock now</h1><p class='note'>Page {number} of 3 · 30 books</p>{rows}"
            f"<p>{links}{after}</p>"
        )
        return skin.respond(ctx, "Books", main)

    return CaseSite(
        routes={
            "": skin.handler(
                ctx,
                "Home",
                "<h1>Thirty good books, this week</h1><p>Our shelves change every Monday. "
                "Everything in stock is listed online.</p>"
                f"<p><a class='btn' href='{ctx.url('/books')}'>See what's in</a></p>",
            ),
            "/books": books,
            "/sell": skin.handler(
                ctx, "Sell to us", "<h1>Sell to us</h1><p>Bring books in on Mondays.</p>"
            ),
            **skin.ordinary(ctx, about="A bookshop in a former bakery, open since 2004."),
        }
    )
