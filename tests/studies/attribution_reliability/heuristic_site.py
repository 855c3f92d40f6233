"""The heuristic engine tests' own small site: one scenario per sub-path."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from pairbench.studies.attribution_reliability.site import CaseSite, SiteContext, page
from pairbench.studies.attribution_reliability.site._kit import Handler


def _html(title: str, body: str, status: int = 200) -> Handler:
    async def handler(request: Request) -> Response:
        return HTMLResponse(page(title, body), status_code=status)

    return handler


def build(ctx: SiteContext) -> CaseSite:
    u = ctx.url
    routes: dict[str, Handler] = {
        # A dead primary button: the handler returns before doing anything.
        "/dead": _html(
            "Basket",
            "<h1>Your basket</h1><p>One lemon cake.</p>"
            "<button id=go>Place order</button>"
            "<script>document.getElementById('go').onclick = () => { return; };</script>",
        ),
        # The same button that works.
        "/ok": _html(
            "Basket",
            "<h1>Your basket</h1><p>One lemon cake.</p><button id=go>Place order</button>"
            "<p id=out></p><script>document.getElementById('go').onclick = async () => {"
            f"await fetch('{u('/api/order')}', {{method: 'POST'}});"
            "document.getElementById('out').textContent = 'Thank you, your order is confirmed.';"
            "};</script>",
        ),
        "POST /api/order": _json({"ok": True}),
        # The same working button on a page whose click handler keeps the page busy (2.5 s) for
        # longer than the tests' 2 s no-effect window before it sends its request (a loaded
        # machine's slow click, made deterministic).
        "/busy": _html(
            "Basket",
            "<h1>Your basket</h1><p>One lemon cake.</p><button id=go>Place order</button>"
            "<p id=out></p><script>document.getElementById('go').onclick = async () => {"
            "const t = Date.now(); while (Date.now() - t < 2500) {}"
            f"await fetch('{u('/api/order')}', {{method: 'POST'}});"
            "document.getElementById('out').textContent = 'Thank you, your order is confirmed.';"
            "};</script>",
        ),
        # A styled 500 behind a download link.
        "/invoice": _html(
            "Account", f"<h1>Invoices</h1><a href='{u('/invoice/file')}'>Download invoice</a>"
        ),
        "/invoice/file": _html("Oops", "<h1>We are sorry</h1><p>Please come back.</p>", 500),
        # Error text after a click.
        "/code": _html(
            "Basket",
            "<p>Basket: one cake.</p><button id=b>Apply discount</button><p id=o></p>"
            "<script>document.getElementById('b').onclick = () => {"
            "document.getElementById('o').textContent = 'Something went wrong.'; };</script>",
        ),
        # Prose that mentions failure, behind a link: read, never blamed.
        "/faq": _html(
            "Help", f"<p>Help centre.</p><a href='{u('/faq/refunds')}'>Refund policy</a>"
        ),
        "/faq/refunds": _html(
            "Refunds",
            "<h1>Refund policy</h1><p>Refunds take five days. If a payment failed or a code"
            " was invalid, nothing is charged.</p>",
        ),
        # A page that announces an error in its heading, behind a link.
        "/track": _html("Orders", f"<a href='{u('/track/parcel')}'>Track my parcel</a>"),
        "/track/parcel": _html("Sorry", "<h1>Sorry, something went wrong</h1>"),
        # A required choice with nothing to choose: our hand cannot complete the form.
        "/size": _html(
            "Cake",
            "<form><label for=s>Size</label><select id=s required>"
            "<option value=''>Choose</option></select><button>Add to basket</button></form>",
        ),
        # A form the goal's words do not name, answered by a lookup.
        "/area": _html(
            "Delivery",
            "<h1>Areas</h1><label for=pc>Postcode</label><input id=pc>"
            "<button id=go>Check postcode</button><p id=out></p>"
            "<script>document.getElementById('go').onclick = async () => {"
            f"const r = await fetch('{u('/area/lookup')}?pc=' + "
            "encodeURIComponent(document.getElementById('pc').value));"
            "document.getElementById('out').textContent = await r.text(); };</script>",
        ),
        "/area/lookup": _lookup,
        # A valid UK phone number refused by an over-strict pattern.
        "/phone": _html(
            "Call back",
            f"<form action='{u('/phone/done')}' method=get><label for=p>Phone number</label>"
            "<input id=p name=p type=tel required pattern='[0-9]{11}'>"
            "<button>Request a call back</button></form>",
        ),
        # A result that appears 6 s after the click, with no request and no spinner.
        "/slow": _html(
            "Delivery",
            "<button id=s>Show delivery options</button><p id=r></p>"
            "<script>document.getElementById('s').onclick = () => setTimeout(() => {"
            "document.getElementById('r').textContent = 'Standard delivery: 3 days.';"
            "}, 6000);</script>",
        ),
        # Automated browsers are refused (the gate reads the user agent).
        "/gate": _gate,
        # The goal needs an email address.
        "/email": _html(
            "Guide",
            f"<form action='{u('/email/done')}' method=post><label for=e>Email address</label>"
            "<input id=e name=e type=email><button>Get the gardening guide</button></form>",
        ),
        "POST /email/done": _html("Done", "<p>Thank you, sent.</p>"),
        # The goal lives on another origin.
        "/away": _html(
            "Tables",
            f"<p>Tables for lunch.</p><a href='{ctx.other_origin}{u('/book')}'>Book a table</a>",
        ),
        # The answer is behind a hover-only submenu.
        "/menu": _html(
            "Home",
            "<style>.sub{display:none}.top:hover .sub{display:block}</style>"
            "<nav><ul><li class=top>Account<ul class=sub>"
            f"<li><a href='{u('/menu/billing')}'>Billing</a></li></ul></li></ul></nav>"
            "<p>Welcome back.</p>",
        ),
        "/menu/billing": _html(
            "Billing", "<h1>Billing</h1><p>Your billing date is the 3rd of each month.</p>"
        ),
        # A page that promises delivery times and has none, beside two others to read.
        "/promise": _nav_page(u, "Home", "<p>Fresh bread every day.</p>"),
        "/promise/delivery": _nav_page(u, "Delivery", "<p>We deliver across the city.</p>"),
        "/promise/about": _nav_page(u, "About", "<p>A small bakery.</p>"),
        "/promise/contact": _nav_page(u, "Contact", "<p>Visit us at the market.</p>"),
    }
    other = {"/book": _html("Partner", "<p>Partner booking.</p>")}
    return CaseSite(routes=routes, other_routes=other, automation_gate=True)


async def _lookup(request: Request) -> Response:
    return HTMLResponse(f"Yes, we deliver to {request.query_params.get('pc', '')} on Wednesdays.")


def _json(data: dict[str, bool]) -> Handler:
    async def handler(request: Request) -> Response:
        return JSONResponse(data)

    return handler


async def _gate(request: Request) -> Response:
    if request.state.automated:
        return HTMLResponse(page("Denied", "<p>Access denied.</p>"), status_code=403)
    return HTMLResponse(page("Prices", "<p>Prices from 12 pounds.</p>"))


def _nav_page(u: object, title: str, body: str) -> Handler:
    assert callable(u)
    nav = (
        f"<nav><a href='{u('/promise')}'>Home</a> <a href='{u('/promise/delivery')}'>"
        f"Delivery times</a> <a href='{u('/promise/about')}'>About us</a> "
        f"<a href='{u('/promise/contact')}'>Contact</a></nav>"
    )
    return _html(title, nav + f"<h1>{title}</h1>" + body)
