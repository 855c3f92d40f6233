"""Sites for the evidence packages: a bakery or tea room, and a small web app's brochure.

Each builder takes a skin, so the calibration packages get the same mechanisms under new
names and wording. The florist and the rail timetable live in ``_packages_florist_rail``. Every
page is plain HTML with inline script: no external asset, nothing but what a visitor sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from pairbench.studies.attribution_reliability.site._kit import (
    CaseSite,
    SiteBuilder,
    SiteContext,
    esc,
)
from pairbench.studies.attribution_reliability.site._package_page import doc, static
from pairbench.studies.attribution_reliability.site._packages_florist_rail import (
    FERN,
    LANTERN,
    florist,
    timetable,
)


@dataclass(frozen=True)
class ShopSkin:
    """Names and wording of one small food shop (the mechanisms stay the same)."""

    brand: str
    intro: str
    items: tuple[tuple[str, str, str], ...]
    """(name, price, one line about it)."""
    order_nav: str
    order_title: str
    order_button: str
    thanks: str
    slot_button: str
    slot_result: str
    faq: tuple[tuple[str, str], ...]
    job_title: str


def shop(skin: ShopSkin, ctx: SiteContext) -> CaseSite:
    """Home, menu (with save buttons), an order form that confirms in the page, a slot
    checker that answers after two seconds, a collapsed FAQ and a job form."""
    nav = [
        ("", "Home"),
        ("/today", "Menu"),
        ("/order", skin.order_nav),
        ("/slots", "Times"),
        ("/faq", "FAQ"),
        ("/jobs", "Work with us"),
    ]
    view = partial(doc, ctx, skin.brand, nav)
    items = "".join(
        f"<li><strong>{esc(n)}</strong> {esc(p)}<br><span class=note>{esc(about)}</span> "
        f"<button type=button onclick=\"this.textContent='Saved'\">Save</button></li>"
        for n, p, about in skin.items
    )
    options = "".join(f"<option>{esc(n)}</option>" for n, _, _ in skin.items)
    order = (
        f"<p>Tell us who you are and we will do the rest.</p>"
        f"<label for=who>Your name</label><input id=who autocomplete=off>"
        f"<label for=pick>Choose</label><select id=pick>{options}</select>"
        f"<p><button type=button id=go>{esc(skin.order_button)}</button></p>"
        f"<p id=msg role=status aria-live=polite></p>"
        "<script>document.getElementById('go').addEventListener('click',function(){"
        "var m=document.getElementById('msg');"
        "if(!document.getElementById('who').value.trim()){m.textContent='Please add your name.';"
        f"return;}}m.textContent={_js(skin.thanks)};}});</script>"
    )
    slots = (
        "<p>See the next free time before you come in.</p>"
        f"<button type=button id=chk>{esc(skin.slot_button)}</button>"
        "<p id=out role=status aria-live=polite></p>"
        "<script>document.getElementById('chk').addEventListener('click',function(){"
        "var o=document.getElementById('out');o.textContent='Checking…';"
        f"setTimeout(function(){{o.textContent={_js(skin.slot_result)};}},2000);}});</script>"
    )
    faq = "".join(
        f"<details><summary>{esc(q)}</summary><p>{esc(a)}</p></details>" for q, a in skin.faq
    )
    jobs = (
        f"<p>{esc(skin.job_title)}: early starts, good coffee, weekends off in turn.</p>"
        "<label for=cv>Upload your CV</label><input id=cv type=file>"
        "<label for=em>Email</label><input id=em type=email>"
        "<p><button type=button id=send>Send application</button></p><p id=said></p>"
        "<script>document.getElementById('send').addEventListener('click',function(){"
        "document.getElementById('said').textContent="
        "document.getElementById('cv').files.length?'Thank you, we will write soon.'"
        ":'Please attach your CV.';});</script>"
    )
    home = f'<p>{esc(skin.intro)}</p><p><a href="{ctx.url("/today")}">See the menu</a></p>'
    return CaseSite(
        routes={
            "": static(view("Welcome", home)),
            "/today": static(view("Menu", f"<ul id=board>{items}</ul>")),
            "/order": static(view(skin.order_title, order)),
            "/slots": static(view("Times", slots)),
            "/faq": static(view("FAQ", faq)),
            "/jobs": static(view("Work with us", jobs)),
        }
    )


def _js(text: str) -> str:
    """A JavaScript string literal for ``text`` (inside an HTML script: no ``</``)."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("</", "<\\/")
    return f"'{escaped}'"


@dataclass(frozen=True)
class AppSkin:
    """Names and wording of one small web app's brochure site."""

    brand: str
    pitch: str
    plans_path: str
    plans_label: str
    plans: tuple[tuple[str, str], ...]
    features: tuple[str, ...]
    contact: str


def app(skin: AppSkin, ctx: SiteContext) -> CaseSite:
    """Home, plans with prices (not at ``/pricing``), features, help (an email address, no
    phone number anywhere) and about."""
    nav = [
        ("", "Home"),
        (skin.plans_path, skin.plans_label),
        ("/features", "Features"),
        ("/help", "Help"),
        ("/about", "About"),
    ]
    view = partial(doc, ctx, skin.brand, nav)
    plans = "".join(f"<li><strong>{esc(n)}</strong> {esc(p)}</li>" for n, p in skin.plans)
    feats = "".join(f"<li>{esc(f)}</li>" for f in skin.features)
    filler = "".join(
        f"<p>{esc(skin.brand)} keeps every board in one place, so the whole team sees the "
        f"same numbers on {day}.</p>"
        for day in ("Monday", "Wednesday", "Friday", "the first of the month")
    )
    return CaseSite(
        routes={
            "": static(
                view(skin.brand, f"<p>{esc(skin.pitch)}</p>{filler}<button>Start free</button>")
            ),
            skin.plans_path: static(
                view(skin.plans_label, f"<ul>{plans}</ul><p>Every price includes VAT.</p>")
            ),
            "/features": static(view("Features", f"<ul>{feats}</ul>")),
            "/help": static(
                view("Help", f"<p>Write to us at {esc(skin.contact)}; we answer within a day.</p>")
            ),
            "/about": static(
                view("About", "<p>A small team of four, working from a shared office.</p>")
            ),
        }
    )


CRUMB = ShopSkin(
    brand="Crumb & Co",
    intro="Cakes baked every morning in our little kitchen on Dock Street.",
    items=(
        ("Lemon drizzle", "£18", "Sharp, soft and sticky on top."),
        ("Chocolate fudge", "£22", "Three layers, dark ganache."),
        ("Carrot and walnut", "£20", "Cream cheese frosting."),
        ("Victoria sponge", "£16", "Jam and vanilla cream."),
        ("Coffee and pecan", "£21", "Espresso buttercream."),
        ("Raspberry ripple", "£19", "Pink, light, summery."),
    ),
    order_nav="Order a cake",
    order_title="Order a cake",
    order_button="Place order",
    thanks="Thanks! Your order is in — we will call you to confirm.",
    slot_button="Check a collection slot",
    slot_result="Saturday 10:00 is free for collection.",
    faq=(
        ("Opening hours", "Tuesday to Saturday, 8:00 to 16:00."),
        ("Delivery areas", "We deliver to Leith, Portobello and Morningside."),
        ("Allergens", "Every cake lists its allergens on the box."),
        ("Candles", "Ask at the counter, they are free."),
    ),
    job_title="Weekend baker",
)

KETTLE = ShopSkin(
    brand="Kettle & Leaf",
    intro="A tea room with twelve tables, loose-leaf tea and scones until late.",
    items=(
        ("Smoky lapsang", "£4", "Pine-smoked black tea."),
        ("Jasmine pearls", "£5", "Rolled green tea, floral."),
        ("Cream tea", "£9", "Two scones, clotted cream, jam."),
        ("Cheese toastie", "£7", "Mature cheddar, sourdough."),
        ("Rooibos chai", "£4", "Spiced, caffeine free."),
    ),
    order_nav="Book a table",
    order_title="Book a table",
    order_button="Reserve a table",
    thanks="Thank you, your table is held — see you soon.",
    slot_button="Check a free table",
    slot_result="Friday 19:30 is free for two.",
    faq=(
        ("Dogs", "Well-behaved dogs are welcome by the window."),
        ("Private hire", "The back room seats twenty."),
        ("Gift cards", "Sold at the till in any amount."),
    ),
    job_title="Tea room host",
)

TALLY = AppSkin(
    brand="Tallyboard",
    pitch="Shared scoreboards for small teams: targets, streaks and weekly totals.",
    plans_path="/tiers",
    plans_label="Plans",
    plans=(("Starter", "£9 a month"), ("Team", "£29 a month"), ("Studio", "£79 a month")),
    features=("Unlimited boards", "Export to CSV", "Weekly email digest", "Dark mode"),
    contact="hello@tallyboard.example",
)

LEDGER = AppSkin(
    brand="Ledgerly",
    pitch="Simple bookkeeping for market traders and makers.",
    plans_path="/join",
    plans_label="Subscriptions",
    plans=(("Solo", "£6 a month"), ("Stall", "£15 a month"), ("Shop", "£35 a month")),
    features=("Receipt photos", "VAT summary", "Bank feeds", "Print to PDF"),
    contact="team@ledgerly.example",
)


def _registry() -> dict[str, SiteBuilder]:
    return {
        "pk-crumb": partial(shop, CRUMB),
        "pk-kettle": partial(shop, KETTLE),
        "pk-tally": partial(app, TALLY),
        "pk-ledger": partial(app, LEDGER),
        "pk-fern": partial(florist, FERN),
        "pk-lantern": partial(florist, LANTERN),
        "pk-harbour": timetable,
    }


BUILDERS: dict[str, SiteBuilder] = _registry()
"""The packages' sites by fixture name (``packages.json`` ``fixture``)."""
