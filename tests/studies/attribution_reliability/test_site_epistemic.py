"""The epistemic sites in real headless Chromium: what a visitor looks for is where the
manifest says (collapsed, one link further, at another route than the guessed one, in a
third tab, far down, among look-alike labels, over eight pages, in plain view), and the
phone number of X05 and C-X05 is on no route at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from helpers.common import skip_outside_ci
from pairbench.fixtures._webmcp import CHROMIUM_ARGS, chromium_executable, chromium_problem
from pairbench.studies.attribution_reliability._manifest import load_cases
from pairbench.studies.attribution_reliability.site import serve_case
from pairbench.studies.attribution_reliability.site._epistemic import TENTS
from studies.attribution_reliability.ex_crawl import (
    DESKTOP_UA,
    PHONE_LIKE,
    Fetched,
    cases_of,
    crawl,
    label_free_problems,
    split,
    warm_up,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    problem = chromium_problem()
    if problem is not None:
        skip_outside_ci(f"fixture-site browser tests: {problem}")
    pw = sync_playwright().start()
    try:
        chromium = pw.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            warm_up(chromium)
            yield chromium
        finally:
            chromium.close()
    finally:
        pw.stop()


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield context.new_page()
    finally:
        context.close()


def person() -> httpx.Client:
    return httpx.Client(headers={"User-Agent": DESKTOP_UA}, timeout=10)


def test_x01_hours_sit_in_a_closed_details(tab: Page) -> None:
    with serve_case("x01-deli-hours", 1) as site:
        tab.goto(f"{site.start_url}/find-us")
        sunday = tab.get_by_text("Sunday: 10:00 to 15:00")
        assert tab.locator("details:not([open])", has_text="Sunday").count() == 1
        assert not sunday.is_visible()
        tab.click("summary:has-text('Opening hours')")
        assert sunday.is_visible()


def test_x02_contact_is_one_link_past_about(tab: Page) -> None:
    with serve_case("x02-publisher-people", 2) as site:
        tab.goto(f"{site.start_url}/about")
        assert "press and publicity" not in tab.inner_text("body")
        tab.click("text=Meet the people")
        tab.wait_for_load_state()
        assert tab.url.endswith("/about/people")
        assert "press and publicity" in tab.inner_text("body")


@pytest.mark.parametrize(
    ("fixture", "guessed", "real", "nav", "shown"),
    [
        ("x03-timesheet-plans", "/pricing", "/plans", "Plans", "24 a month"),
        ("c-x03-dogwalker-rates", "/prices", "/rates", "Rates", "11 per dog"),
    ],
)
def test_guessed_route_is_missing_and_the_real_one_is_in_the_nav(
    tab: Page, fixture: str, guessed: str, real: str, nav: str, shown: str
) -> None:
    with serve_case(fixture, 3) as site:
        answer = tab.goto(f"{site.start_url}{guessed}")
        assert answer is not None and answer.status == 404
        assert shown not in tab.inner_text("body")
        tab.goto(site.start_url)
        tab.click(f"header nav >> text={nav}")
        tab.wait_for_load_state()
        assert tab.url.endswith(real) and shown in tab.inner_text("body")
        with person() as c:
            assert c.get(f"{site.start_url}{guessed}").status_code == 404


def test_x04_answer_is_in_the_third_tab(tab: Page) -> None:
    with serve_case("x04-kettle-tabs", 4) as site:
        tab.goto(f"{site.start_url}/kettles/stovetop")
        answer = tab.get_by_text("within 60 days")
        labels = tab.locator("[role=tab]").all_inner_texts()
        assert labels.index("Delivery & returns") == 2
        assert not answer.is_visible()
        tab.click("[role=tab] >> text=Delivery & returns")
        assert answer.is_visible()
        assert not tab.get_by_text("A classic kettle").is_visible()


@pytest.mark.parametrize("case_id", ["X05", "C-X05"])
def test_no_route_has_a_phone_number(tab: Page, case_id: str) -> None:
    case = load_cases()[case_id]
    pages = crawl(case)
    assert len(pages) >= 3 and all(p.status == 200 for p in pages if " " not in p.route)
    assert [m.group() for p in pages for m in PHONE_LIKE.finditer(p.body)] == []
    assert not any(re.search(r"\b(tel|phone|call us)\b", p.body, re.I) for p in pages)
    with serve_case(case.fixture, 5) as site:
        for p in {p.route for p in pages if p.origin == "main"}:
            tab.goto(f"{site.start_url}{p}")
            assert PHONE_LIKE.search(tab.inner_text("body")) is None
            assert tab.locator("a[href^='tel:']").count() == 0


def test_the_phone_probe_fires_on_a_number() -> None:
    assert PHONE_LIKE.search("Call 020 7946 0000 today") is not None
    assert PHONE_LIKE.search("+44 (0)161 496 0123") is not None
    assert PHONE_LIKE.search("Open 08:00 to 18:00, 14 Quay Street, since 1998") is None


FIRST_SCREEN = """Array.from(document.querySelectorAll('main *'))
  .filter(e => e.children.length === 0 && e.getBoundingClientRect().top < innerHeight)
  .map(e => e.textContent).join('|')"""
"""The text of every leaf element on the first screen."""


def test_x06_sync_changes_only_a_time_far_below(tab: Page) -> None:
    with serve_case("x06-rota-calendar", 6) as site:
        tab.goto(site.start_url)
        when = tab.locator("#when")
        box = when.bounding_box()
        assert box is not None and box["y"] > 2 * 800  # well below the first screen
        near = tab.evaluate(FIRST_SCREEN)
        assert when.inner_text() == "3 days ago"
        tab.click("text=Sync")
        tab.wait_for_function("document.getElementById('when').textContent === 'just now'")
        assert "3 days ago" not in near and tab.evaluate(FIRST_SCREEN) == near
        assert tab.evaluate("window.scrollY") == 0


@pytest.mark.parametrize(
    ("fixture", "path", "text"),
    [("x07-roaster-shipping", "/shipping", "Orders to Norway"), ("x10-cafe-menu", "", "vegan")],
)
def test_answer_depth_on_the_page(tab: Page, fixture: str, path: str, text: str) -> None:
    with serve_case(fixture, 7) as site:
        tab.goto(f"{site.start_url}{path}")
        box = tab.get_by_text(text).bounding_box()
        assert box is not None
        if fixture.startswith("x07"):  # at the bottom of a long page
            assert box["y"] > 3 * 800
            assert box["y"] > tab.evaluate("document.body.scrollHeight") - 600
        else:  # in plain view on arrival
            assert box["y"] < 800 and tab.get_by_text(text).is_visible()


def test_x08_look_alike_labels_and_the_right_one_works(tab: Page) -> None:
    with serve_case("x08-hosting-account", 8) as site:
        tab.goto(f"{site.start_url}/account")
        links = tab.locator("main a").all_inner_texts()
        assert links == ["Billing address", "Billing contact", "Bill pay"]
        tab.click("text=Billing address")
        tab.wait_for_load_state()
        tab.fill("#street", "8 Harbour Road")
        tab.fill("#town", "Leith")
        tab.click("form button")
        tab.wait_for_load_state()
        assert "Saved" in tab.inner_text("h1")


def test_x09_forty_tents_over_eight_pages(tab: Page) -> None:
    seen: list[str] = []
    with serve_case("x09-outdoor-tents", 9) as site:
        tab.goto(f"{site.start_url}/tents")
        for number in range(1, 9):
            assert f"Page {number} of 8" in tab.inner_text("main")
            seen += tab.locator("main .card b").all_inner_texts()
            if number < 8:
                tab.click(f"main p >> text='{number + 1}'")
                tab.wait_for_load_state()
    assert len(seen) == len(set(seen)) == 40 == len(TENTS)
    lightest = min(TENTS, key=lambda t: t[1])[0]
    assert seen.index(lightest) // 5 == 2  # page 3: neither first nor last


def test_epistemic_sites_are_label_free() -> None:
    every = load_cases()
    problems: list[str] = []
    for case in cases_of("X", "C-X"):
        problems += label_free_problems(case, crawl(case), every)
    assert problems == []


def test_the_label_free_check_sees_targets_outside_visible_text() -> None:
    case = load_cases()["X06"]
    every = load_cases()
    visible = Fetched("main", "", 200, (), "<button>Sync</button><p>Last synced</p>")
    assert label_free_problems(case, [visible], every) == []
    in_script = Fetched("main", "", 200, (), "<script>var s = 'last synced';</script>")
    in_attr = Fetched("main", "", 200, (), '<button aria-label="Sync now">go</button>')
    assert len(label_free_problems(case, [in_script, in_attr], every)) == 2
    assert split("<p>a<!-- sync -->b</p>").other == [" sync "]
