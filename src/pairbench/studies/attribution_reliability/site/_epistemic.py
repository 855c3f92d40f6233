"""Sites that work, where what a visitor wants is there but easy to miss (or, once, absent).

Content inside a closed ``<details>``, one link further, at a route other than the one a
visitor guesses, in a third tab, at the bottom of a long page, among similar labels, spread
over eight pages, or in plain view; a control whose only effect is far away; and a phone
number that no route has at all.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability.site._kit import (
    CaseSite,
    Handler,
    SiteBuilder,
    SiteContext,
    esc,
)
from pairbench.studies.attribution_reliability.site._skin import Skin
from pairbench.studies.attribution_reliability.site._skin_ex import (
    field,
    form_page,
    html,
    posted,
    shell,
)


def build_x01(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Saltmarsh Deli",
        "A small deli on the harbour",
        "#7a5c2e",
        nav=(("Menu", "/menu"), ("Find us", "/find-us")),
    )
    find_us = (
        "<h1>Find us</h1><p>14 Quay Street, by the fish market.</p>"
        "<details><summary>Opening hours</summary><ul><li>Monday to Friday: 08:00 to 18:00"
        "</li><li>Saturday: 09:00 to 17:00</li><li>Sunday: 10:00 to 15:00</li></ul></details>"
        "<details><summary>Parking</summary><p>Quay car park, two minutes away.</p></details>"
    )
    home = "<h1>Cheese, bread and good coffee</h1><p>A small deli on the harbour.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/menu": html(shell(ctx, skin, "Menu", "<h1>Menu</h1>"
                                "<p>Toasties, soups and cakes.</p>")),
            "/find-us": html(shell(ctx, skin, "Find us", find_us)),
        },
    )  # fmt: skip


def build_x02(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Quillfield Press",
        "Poetry and essays",
        "#41485e",
        nav=(("Books", "/books"), ("About", "/about")),
    )
    about = (
        "<h1>About us</h1><p>A small publisher of poetry and essays, founded in 2009.</p>"
        f'<p><a href="{esc(ctx.url("/about/people"))}">Meet the people</a></p>'
    )
    people = (
        "<h1>The people</h1>"
        '<div class="card"><b>Ada Merrin</b>, publisher</div>'
        '<div class="card"><b>Tom Okafor</b>, editor</div>'
        '<div class="card"><b>Lena Voss</b>, press and publicity: lena@quillfield.example</div>'
    )
    home = "<h1>Poetry and essays</h1><p>Six new titles a year.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/books": html(shell(ctx, skin, "Books", "<h1>Books</h1>"
                                 "<p>Our spring list is out now.</p>")),
            "/about": html(shell(ctx, skin, "About", about)),
            "/about/people": html(shell(ctx, skin, "The people", people)),
        },
    )  # fmt: skip


def not_found(ctx: SiteContext, skin: Skin) -> Handler:
    """The site's own not-found page (status 404) for a route a visitor might guess."""
    body = "<h1>Page not found</h1><p>Sorry, there is nothing here. Try the menu above.</p>"
    return html(shell(ctx, skin, "Page not found", body), status=404)


def build_x03(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Tallyhive",
        "Timesheets in two clicks",
        "#b0522c",
        nav=(("Features", "/features"), ("Plans", "/plans")),
    )
    plans = (
        "<h1>Plans</h1>"
        '<div class="card"><b>Solo</b>: 6 a month, one user</div>'
        '<div class="card"><b>Team</b>: 24 a month, up to ten users</div>'
        '<div class="card"><b>Company</b>: 90 a month, unlimited users</div>'
    )
    home = "<h1>Timesheets your team will fill in</h1><p>Track hours in two clicks.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/features": html(shell(ctx, skin, "Features", "<h1>Features</h1>"
                                    "<p>Timers, reports, exports.</p>")),
            "/plans": html(shell(ctx, skin, "Plans", plans)),
            "/pricing": not_found(ctx, skin),
        },
    )  # fmt: skip


_TABS_JS = (
    "<script>document.addEventListener('click', function (e) {"
    " var t = e.target.closest('[role=tab]'); if (!t) return;"
    " document.querySelectorAll('[role=tab]').forEach(function (b) {"
    "  var on = b === t; b.setAttribute('aria-selected', on);"
    "  document.getElementById(b.getAttribute('aria-controls')).hidden = !on; }); });"
    "</script>"
)


def tabs(panels: list[tuple[str, str]]) -> str:
    """Tabs (first one open); a panel's content is shown when its tab is clicked."""
    buttons = "".join(
        f'<button role="tab" aria-controls="p{i}" aria-selected="{str(i == 0).lower()}"'
        f' style="margin-right:6px">{esc(label)}</button>'
        for i, (label, _) in enumerate(panels)
    )
    bodies = "".join(
        f'<div role="tabpanel" id="p{i}"{"" if i == 0 else " hidden"}>{content}</div>'
        for i, (_, content) in enumerate(panels)
    )
    return f'<div role="tablist">{buttons}</div>{bodies}{_TABS_JS}'


def build_x04(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Kettle & Co",
        "Everything for a good cup of tea",
        "#4f6d5a",
        nav=(("Kettles", "/kettles"), ("Teapots", "/teapots")),
    )
    product = "<h1>Stovetop kettle, 1.8 litres</h1><p>Enamelled steel, whistling lid.</p>" + tabs(
        [
            ("Description", "<p>A classic kettle for gas, electric and induction hobs.</p>"),
            ("Specifications", "<p>Capacity 1.8 l. Weight 1.1 kg. Colours: cream, sage.</p>"),
            ("Delivery & returns", "<p>Free delivery over 40. You can send it back within "
                                   "60 days of delivery for a full refund.</p>"),
        ]
    )  # fmt: skip
    home = "<h1>Everything for a good cup of tea</h1><p>Kettles, teapots, cups.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/kettles": html(shell(ctx, skin, "Kettles", "<h1>Kettles</h1>"
                                   f'<p><a href="{esc(ctx.url("/kettles/stovetop"))}">'
                                   "Stovetop kettle, 1.8 litres</a></p>")),
            "/kettles/stovetop": html(shell(ctx, skin, "Stovetop kettle", product)),
            "/teapots": html(shell(ctx, skin, "Teapots", "<h1>Teapots</h1>"
                                   "<p>Cast iron and stoneware.</p>")),
        },
    )  # fmt: skip


def build_x05(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Brightwater Yoga",
        "Yoga for every body",
        "#2a6470",
        nav=(("Timetable", "/timetable"), ("Contact", "/contact")),
    )
    contact = (
        "<h1>Contact</h1><p>Write to hello@brightwater.example and we answer within two days."
        "</p><p>Studio: Canal Yard, Eastside.</p>"
    )
    home = "<h1>Yoga for every body</h1><p>Morning and evening classes, all levels.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/timetable": html(shell(ctx, skin, "Timetable", "<h1>Timetable</h1>"
                                     "<p>Weekdays at seven and at six.</p>")),
            "/contact": html(shell(ctx, skin, "Contact", contact)),
        },
    )  # fmt: skip


_SYNC_JS = (
    "<script>document.getElementById('go').addEventListener('click', function () {"
    " var b = this; b.disabled = true; setTimeout(function () { b.disabled = false;"
    " document.getElementById('when').textContent = 'just now'; }, 700); });</script>"
)


def build_x06(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Rotaplan", "Rotas for small teams", "#31527a", nav=(("Calendar", ""), ("Team", "/team"))
    )
    filler = "".join(
        f'<div class="card"><b>{day}</b>: {who}</div>'
        for day, who in [
            ("Monday", "Sam (early), Priya (late)"), ("Tuesday", "Jo (early), Sam (late)"),
            ("Wednesday", "Priya (early), Jo (late)"), ("Thursday", "Sam (early), Jo (late)"),
            ("Friday", "Priya (early), Sam (late)"), ("Saturday", "Jo (all day)"),
            ("Sunday", "closed"),
        ]
    )  # fmt: skip
    calendar = (
        '<h1>This week</h1><button id="go">Sync</button>'
        f'{filler}<div style="height:1400px"></div>'
        '<p style="color:#888;font-size:.85em">Last synced: <span id="when">3 days ago</span>'
        f"</p>{_SYNC_JS}"
    )
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Calendar", calendar)),
            "/team": html(shell(ctx, skin, "Team", "<h1>Team</h1>"
                                "<p>Sam, Priya and Jo.</p>")),
        },
    )  # fmt: skip


_LONG_TOPICS = [
    ("How we pack", "Every order is packed in recycled card and paper tape."),
    ("When we dispatch", "Orders placed before noon leave the same working day."),
    ("Tracking", "You get a tracking link as soon as the courier collects your parcel."),
    ("Damaged parcels", "Send us a photo and we replace the item at no cost."),
    ("Gift wrapping", "Add a note at checkout and we wrap it in plain kraft paper."),
    ("Bulk orders", "Cafes and shops can ask for trade prices on orders of fifty or more."),
    ("Storage", "Keep beans sealed, cool and dark; use within a month of opening."),
    ("Grind sizes", "Choose whole bean, espresso, filter or cafetiere at checkout."),
]


def build_x07(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Ember Roasters",
        "Small-batch coffee",
        "#5a3a2a",
        nav=(("Coffee", "/coffee"), ("Shipping", "/shipping")),
    )
    sections = "".join(
        f"<h2>{esc(title)}</h2><p>{esc(text)}</p>" + "<p>" + " ".join([esc(text)] * 12) + "</p>"
        for title, text in _LONG_TOPICS
    )
    shipping = (
        f"<h1>Shipping information</h1>{sections}<h2>Countries we send to</h2>"
        "<p>The United Kingdom, Ireland, France, Germany, the Netherlands, Denmark, Sweden "
        "and Norway. Orders to Norway take four to six working days.</p>"
    )
    home = "<h1>Small-batch coffee</h1><p>Roasted on Tuesdays, sent on Wednesdays.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/coffee": html(shell(ctx, skin, "Coffee", "<h1>Coffee</h1>"
                                  "<p>Three single origins and a house blend.</p>")),
            "/shipping": html(shell(ctx, skin, "Shipping", shipping)),
        },
    )  # fmt: skip


def build_x08(ctx: SiteContext) -> CaseSite:
    skin = Skin("Cloudlet Hosting", "Small sites, well kept", "#2c5f8a",
                nav=(("Dashboard", ""), ("Account", "/account")))  # fmt: skip
    account = (
        "<h1>Account</h1><ul>"
        f'<li><a href="{esc(ctx.url("/account/bill-to"))}">Billing address</a></li>'
        f'<li><a href="{esc(ctx.url("/account/bill-contact"))}">Billing contact</a></li>'
        f'<li><a href="{esc(ctx.url("/account/pay"))}">Bill pay</a></li></ul>'
    )
    street = form_page(ctx, skin, "Invoice details", "Printed on every invoice.",
                       "/account/bill-to", field("Street", "street") + field("Town", "town")
                       + field("Postcode", "postcode", required=False), "Save")  # fmt: skip
    person = form_page(ctx, skin, "Who gets invoices", "We send invoices to this person.",
                       "/account/bill-contact", field("Name", "name")
                       + field("Email", "mail", "email"), "Save")  # fmt: skip
    pay = shell(ctx, skin, "Pay", "<h1>Pay an invoice</h1><p>Nothing is due today.</p>")
    home = "<h1>Dashboard</h1><p>Two sites running, all healthy.</p>"
    saved = "<h1>Saved</h1><p>Your next invoice will use these details.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Dashboard", home)),
            "/account": html(shell(ctx, skin, "Account", account)),
            "/account/bill-to": html(street),
            "POST /account/bill-to": posted(ctx, skin, ("street", "town"), saved),
            "/account/bill-contact": html(person),
            "POST /account/bill-contact": posted(ctx, skin, ("name",), saved),
            "/account/pay": html(pay),
        },
    )  # fmt: skip


TENTS = [
    (f"{name} {size}", grams)
    for name, base in [("Fellrunner", 1900), ("Cairn", 2600), ("Skylark", 1500),
                       ("Bothy", 3400), ("Heron", 2100), ("Moorland", 2900),
                       ("Driftwood", 2300), ("Larch", 3100)]
    for size, grams in zip(("One", "Two", "Three", "Four", "Six"),
                           (base, base + 450, base + 1100, base + 1700, base + 2600),
                           strict=True)
]  # fmt: skip
"""Forty tents; the lightest (Skylark One) is on page 3 of 8."""


def _tent_list(ctx: SiteContext, skin: Skin) -> Handler:
    async def handler(request: Request) -> Response:
        raw = request.query_params.get("page", "1")
        number = int(raw) if raw.isdigit() and 1 <= int(raw) <= 8 else 1
        rows = "".join(
            f'<div class="card"><b>{esc(name)}</b> &middot; {grams / 1000:.2f} kg</div>'
            for name, grams in TENTS[(number - 1) * 5 : number * 5]
        )
        pages = " ".join(
            f"<b>{n}</b>"
            if n == number
            else f'<a href="{esc(ctx.url(f"/tents?page={n}"))}">{n}</a>'
            for n in range(1, 9)
        )
        body = f"<h1>Tents</h1><p>Page {number} of 8</p>{rows}<p>Pages: {pages}</p>"
        return HTMLResponse(shell(ctx, skin, "Tents", body))

    return handler


def build_x09(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Ridgeline Outdoor",
        "Gear for the hills",
        "#4a6b3a",
        nav=(("Tents", "/tents"), ("Stores", "/stores")),
    )
    home = "<h1>Gear for the hills</h1><p>Forty tents, all in stock.</p>"
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/tents": _tent_list(ctx, skin),
            "/stores": html(shell(ctx, skin, "Stores", "<h1>Stores</h1>"
                                  "<p>Keswick and Fort William.</p>")),
        },
    )  # fmt: skip


def build_x10(ctx: SiteContext) -> CaseSite:
    skin = Skin(
        "Fig Tree Cafe",
        "Breakfast and lunch, every day",
        "#6a7a2a",
        nav=(("Menu", "/menu"), ("Visit", "/visit")),
    )
    home = (
        "<h1>Breakfast and lunch, every day</h1><p>Every dish on our menu can be made vegan: "
        "we swap in oat milk, tofu and plant-based cheese at no extra cost.</p>"
    )
    return CaseSite(
        routes={
            "": html(shell(ctx, skin, "Home", home)),
            "/menu": html(shell(ctx, skin, "Menu", "<h1>Menu</h1>"
                                "<p>Shakshuka, pancakes, soup of the day, flatbreads.</p>")),
            "/visit": html(shell(ctx, skin, "Visit", "<h1>Visit</h1>"
                                 "<p>Corner of Elm Row and Bridge Street.</p>")),
        },
    )  # fmt: skip


BUILDERS: dict[str, SiteBuilder] = {
    "x01-deli-hours": build_x01,
    "x02-publisher-people": build_x02,
    "x03-timesheet-plans": build_x03,
    "x04-kettle-tabs": build_x04,
    "x05-yoga-contact": build_x05,
    "x06-rota-calendar": build_x06,
    "x07-roaster-shipping": build_x07,
    "x08-hosting-account": build_x08,
    "x09-outdoor-tents": build_x09,
    "x10-cafe-menu": build_x10,
}
