"""Every tester-trap site is solvable in real Chromium by the steps a careful user takes,
and its difficulty is really there (test-only probes)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from playwright.sync_api import Browser, Page

from pairbench.studies.attribution_reliability.site import RunningSite, serve_case
from studies.attribution_reliability.site_crawl_chromium import fresh_page, warm_browser

pytestmark = pytest.mark.browser  # needs a browser (the project's meaning of slow)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with warm_browser() as launched:
        yield launched


@contextmanager
def opened(browser: Browser, fixture: str, path: str = "") -> Iterator[tuple[RunningSite, Page]]:
    with serve_case(fixture, seed=31) as site, fresh_page(browser) as page:
        page.goto(site.start_url + path)
        yield site, page


@pytest.mark.parametrize(
    ("fixture", "menu", "item", "answer"),
    [
        ("t01-yoga-account", "My account ▾", "Billing", "Next payment: £49 on 3 March"),
        ("ct01-library-visit", "Visit us ▾", "Opening hours", "Saturday 9:00 to 16:00"),
    ],
)
def test_t01_the_page_is_in_a_hover_menu(
    browser: Browser, fixture: str, menu: str, item: str, answer: str
) -> None:
    with opened(browser, fixture) as (_site, page):
        link = page.get_by_role("link", name=item)
        assert not link.is_visible()
        page.get_by_text(menu).hover()
        assert link.is_visible()
        link.click()
        assert answer in page.inner_text("main")


def test_t02_unlabelled_fields_still_book_when_filled_in_order(browser: Browser) -> None:
    with opened(browser, "t02-grooming-form", "/appointments") as (_site, page):
        assert page.get_by_label("Dog's name").count() == 0  # the labels name no field
        page.locator(".f input").nth(0).fill("Sam")
        page.locator(".f input").nth(1).fill("Biscuit")
        page.locator(".f select").nth(0).select_option("Wash and trim")
        page.locator(".f select").nth(1).select_option("Saturday")
        page.get_by_role("button", name="Request appointment").click()
        page.get_by_text("Biscuit is booked for a wash and trim on Saturday").wait_for()


def test_t03_the_refund_policy_is_one_of_eighty_links(browser: Browser) -> None:
    with opened(browser, "t03-homewares-footer") as (_site, page):
        assert page.locator(".fl a").count() == 80
        page.get_by_role("link", name="Refund policy").click()
        assert "full refund" in page.inner_text("main")


@pytest.mark.parametrize(
    ("fixture", "path", "fill", "button", "answer", "seconds"),
    [
        ("t04-ferry-timetable", "/timetables", "", "Find sailings", "departs 06:45", 6.0),
        ("ct04-grocer-area", "/area", "SE15 4QF", "Check postcode", "deliver to SE15 4QF", 4.0),
    ],
)
def test_t04_the_answer_arrives_after_a_wait(
    browser: Browser, fixture: str, path: str, fill: str, button: str, answer: str, seconds: float
) -> None:
    with opened(browser, fixture, path) as (_site, page):
        if fill:
            page.locator("input").first.fill(fill)
        started = time.monotonic()
        page.get_by_role("button", name=button).click()
        page.wait_for_timeout(1500)
        assert answer not in page.inner_text("main")
        page.get_by_text(answer).wait_for(timeout=(seconds + 8) * 1000)
        assert time.monotonic() - started >= seconds - 0.5


def _seat(page: Page, row: int, col: int) -> tuple[float, float]:
    box = page.locator("#cv").bounding_box()
    assert box is not None
    return box["x"] + 1 + 26 + col * 34 + 14, box["y"] + 1 + 40 + row * 34 + 14


def test_t05_a_click_picks_nothing_and_a_drag_picks_seats(browser: Browser) -> None:
    with opened(browser, "t05-cinema-seats", "/films/long-light") as (_site, page):
        page.mouse.click(*_seat(page, 5, 6))
        assert page.inner_text("#sel") == "none"
        start, end = _seat(page, 5, 6), _seat(page, 5, 7)
        page.mouse.move(*start)
        page.mouse.down()
        page.mouse.move(*end, steps=8)
        page.mouse.up()
        assert page.inner_text("#sel") == "F7, F8"
        page.get_by_role("button", name="Continue").click()
        assert "F7, F8" in page.inner_text("main")


def test_c_t05_the_slider_moves_only_by_dragging(browser: Browser) -> None:
    with opened(browser, "ct05-climbing-sessions", "/sessions") as (_site, page):
        track = page.locator("#tr").bounding_box()
        knob = page.locator("#kn").bounding_box()
        assert track is not None and knob is not None
        page.mouse.click(track["x"] + track["width"] * 0.34, track["y"] + 4)
        assert page.inner_text("#hv") == "1"
        page.mouse.move(knob["x"] + 12, knob["y"] + 12)
        page.mouse.down()
        page.mouse.move(track["x"] + track["width"] * 0.34, track["y"] + 4, steps=6)
        page.mouse.up()
        assert page.inner_text("#hv") == "2"
        page.get_by_role("button", name="Book session").click()
        assert "2 h on the wall" in page.inner_text("main")


def test_t06_the_saved_note_is_brief_and_the_value_persists(browser: Browser) -> None:
    with opened(browser, "t06-gym-settings", "/settings") as (site, page):
        page.get_by_label("Class reminders").select_option("Evening, 6pm")
        page.get_by_role("button", name="Save changes").click()
        page.get_by_text("Saved", exact=True).wait_for(state="visible")
        page.wait_for_timeout(2200)
        assert not page.get_by_text("Saved", exact=True).is_visible()
        assert any(h.method == "POST" and h.status == 200 for h in site.audit)
        page.reload()
        assert page.get_by_label("Class reminders").input_value() == "Evening, 6pm"
        stored = httpx.get(f"{site.start_url}/settings/reminders").json()
        assert stored == {"t": "Evening, 6pm"}


def test_t07_the_answer_opens_on_click(browser: Browser) -> None:
    with opened(browser, "t07-kayak-help", "/help") as (_site, page):
        answer = page.get_by_text("the minimum age for a solo kayak is 14")
        assert not answer.is_visible()
        page.get_by_text("Can children paddle with us?").click()
        assert answer.is_visible()


def test_t08_the_submit_button_is_far_down_and_works(browser: Browser) -> None:
    with opened(browser, "t08-garden-volunteer", "/volunteer") as (_site, page):
        send = page.get_by_role("button", name="Send application")
        top = page.evaluate(
            "(e) => e.getBoundingClientRect().top + window.scrollY", send.element_handle()
        )
        assert top >= 3000
        page.get_by_label("Your name").fill("Alex")
        page.get_by_label("Saturday").check()
        send.click()
        assert "Thank you, Alex!" in page.inner_text("main")


def test_t09_the_unlabelled_pencil_changes_the_day(browser: Browser) -> None:
    with opened(browser, "t09-mealbox-account", "/account") as (_site, page):
        pen = page.locator("#pen")
        assert pen.inner_text().strip() == "" and pen.get_attribute("aria-label") is None
        pen.click()
        page.get_by_label("New day").select_option("Thursday")
        # The form posts and the page navigates: reloading mid-navigation detaches it.
        with page.expect_navigation():
            page.get_by_role("button", name="Update").click()
        page.reload()
        assert "Delivery day: Thursday" in page.inner_text("main")


def test_t10_the_custom_list_picks_a_room(browser: Browser) -> None:
    with opened(browser, "t10-inn-rooms", "/rooms") as (_site, page):
        assert page.locator("select").count() == 1  # the night only; rooms are divs
        page.get_by_text("Choose…").click()
        page.get_by_text("Double, sea view").click()
        page.locator("select").select_option("14")
        page.get_by_role("button", name="Check availability").click()
        assert "Double, sea view: free on the night of 14 June" in page.inner_text("main")
