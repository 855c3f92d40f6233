"""Every case's site is label-free for httpx and for real Chromium, and so is its goal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability._manifest import Case, load_cases
from pairbench.studies.attribution_reliability.site import (
    NOINDEX,
    CaseSite,
    SiteBuilder,
    SiteContext,
    page,
    serve_case,
    serve_site,
)
from studies.attribution_reliability.site_crawl import (
    Capture,
    Crawl,
    crawl_httpx,
    goal_problems,
    label_problems,
)
from studies.attribution_reliability.site_crawl_chromium import crawl_chromium, warm_browser

pytestmark = pytest.mark.browser

CASES = load_cases()
EVERY = list(CASES.values())


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with warm_browser() as launched:
        yield launched


def test_the_manifest_has_cases() -> None:
    assert len(EVERY) >= 26
    assert len({c.fixture for c in EVERY}) == len(EVERY)


@pytest.mark.browser
@pytest.mark.parametrize("case_id", list(CASES))
def test_httpx_crawl_is_label_free(case_id: str) -> None:
    case = CASES[case_id]
    with serve_case(case.fixture, seed=11) as site:
        crawl = crawl_httpx(site)
    assert crawl.captures[0].status == 200
    assert len(crawl.captures) >= 2, "the crawl should reach more than the start page"
    assert label_problems(case, EVERY, crawl) == []


@pytest.mark.browser
@pytest.mark.parametrize("case_id", list(CASES))
def test_chromium_crawl_is_label_free(case_id: str, browser: Browser) -> None:
    case = CASES[case_id]
    with serve_case(case.fixture, seed=12) as site:
        # The 28 s search gates (E10 and its variant) wait the same for every page they
        # serve an automated browser; crawled as a person they show the same pages at once.
        slow = case.fixture in {"e10-hardware-search", "c-e10-library-catalogue"}
        crawl = crawl_chromium(site, browser, case.target_terms, as_person=slow)
    assert len(crawl.doms) >= 2
    assert label_problems(case, EVERY, crawl) == []


@pytest.mark.parametrize("case_id", list(CASES))
def test_goal_is_label_free(case_id: str) -> None:
    assert goal_problems(CASES[case_id], EVERY) == []


def test_slugs_differ_across_trial_seeds() -> None:
    fixture = EVERY[0].fixture
    slugs = set()
    for seed in (1, 2, 3):
        with serve_case(fixture, seed=seed) as site:
            slugs.add(site.slug)
            assert site.start_url.endswith(site.slug)
    assert len(slugs) == 3


# A tiny planted site proves each detector fires: the checker is only as good as that.

_PLANTED = Case.model_validate(
    {
        "id": "Z99",
        "set": "calibration",
        "class": "product_failure",
        "truth": "PRODUCT",
        "description": "A planted page for the checker's own test.",
        "goal": "You want to order a cake.",
        "fixture": "planted",
        "target_terms": ["place order"],
        "allowed_scopes": ["product_behavior"],
        "forbidden_terms": ["nothing happens"],
    }
)


def _planted(
    body: str, *, route: str = "/next", headers: dict[str, str] | None = None
) -> SiteBuilder:
    def build(ctx: SiteContext) -> CaseSite:
        async def start(_request: Request) -> Response:
            html = page("Shop", f"<a href='{ctx.url(route)}'>More</a>{body}")
            return HTMLResponse(html, headers=headers)

        async def more(_request: Request) -> Response:
            return HTMLResponse(page("More", "<p>More cakes.</p>"))

        return CaseSite(routes={"": start, route: more})

    return build


_QUIET = "<button>Place order</button>"
_LOUD = {
    "manifest word": ("<p>Our fixture shop</p>", "body: says 'fixture'"),
    "case id": ("<p>Ref P01</p>", "body: says 'P01'"),
    "truth name": ("<p>PRODUCT</p>", "body: says 'PRODUCT'"),
    "class name": ("<p class='x'>environment</p>", "body: says 'environment'"),
    "forbidden term": ("<p>Nothing happens here</p>", "body: says 'Nothing happens'"),
    "description": (f"<p>{_PLANTED.description}</p>", 'says "A planted page'),
    "target in an attribute": (
        "<button aria-label='Place order'>Go</button>",
        "attribute: target term 'Place order'",
    ),
    "target in a script": (
        "<script>var label = 'place order';</script>",
        "script/style: target term 'place order'",
    ),
    "target in a comment": ("<!-- place order -->", "comment: target term 'place order'"),
}


@pytest.mark.parametrize("kind", list(_LOUD))
def test_the_httpx_checker_fires_on_a_planted_page(kind: str) -> None:
    body, expected = _LOUD[kind]
    with serve_site(_planted(body), seed=5) as site:
        crawl = crawl_httpx(site)
    problems = label_problems(_PLANTED, [_PLANTED, *EVERY], crawl)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"set-cookie": "trap=1; Path=/"}, "cookie: says 'trap'"),
        ({"x-note": "place order"}, "header x-note: target term"),
    ],
)
def test_the_httpx_checker_fires_on_cookies_and_headers(
    headers: dict[str, str], expected: str
) -> None:
    with serve_site(_planted(_QUIET, headers=headers), seed=5) as site:
        crawl = crawl_httpx(site)
    problems = label_problems(_PLANTED, [_PLANTED, *EVERY], crawl)
    assert any(expected in p for p in problems), problems


def test_the_noindex_check_fires_on_a_response_without_it() -> None:
    bare = Capture("httpx", "GET", "http://127.0.0.1:1/v/x", 404, [], "<html><p>gone</p>")
    tagged = Capture(
        "httpx",
        "GET",
        "http://127.0.0.1:1/v/x",
        404,
        [("x-robots-tag", NOINDEX)],
        f'<html><head><meta name="robots" content="{NOINDEX}"></head></html>',
    )
    loud = label_problems(_PLANTED, [_PLANTED], Crawl(captures=[bare]))
    assert any("X-Robots-Tag" in p for p in loud) and any("meta tag" in p for p in loud)
    assert label_problems(_PLANTED, [_PLANTED], Crawl(captures=[tagged])) == []


def test_the_httpx_checker_fires_on_a_target_in_a_route() -> None:
    with serve_site(_planted(_QUIET, route="/place-order"), seed=5) as site:
        crawl = crawl_httpx(site)
    assert any("route" in p for p in label_problems(_PLANTED, [_PLANTED, *EVERY], crawl))


def test_the_httpx_checker_stays_quiet_on_a_clean_page() -> None:
    with serve_site(_planted(_QUIET), seed=5) as site:
        crawl = crawl_httpx(site)
    assert label_problems(_PLANTED, [_PLANTED, *EVERY], crawl) == []


def test_the_goal_checker_fires_and_stays_quiet() -> None:
    loud = _PLANTED.model_copy(update={"goal": "You want to place order number P01."})
    assert len(goal_problems(loud, [_PLANTED, *EVERY])) == 2
    assert goal_problems(_PLANTED, [_PLANTED]) == []


_HIDDEN = {
    "hidden attribute": ("<div hidden><button>Place order</button></div>", True),
    "aria-hidden": ("<div aria-hidden='true'><button>Place order</button></div>", True),
    "display none for good": ("<div style='display:none'>Place order</div>", True),
    "shown on hover": (
        "<style>.m .s{display:none}.m:hover .s{display:block}</style>"
        "<div class='m'>Menu<div class='s'>Place order</div></div>",
        False,
    ),
    "shown on click": (
        "<div id='q' style='cursor:pointer'>Cakes</div><div id='a' style='display:none'>"
        "<button>Place order</button></div><script>document.getElementById('q')"
        ".addEventListener('click', function () { document.getElementById('a').style"
        ".display = 'block'; });</script>",
        False,
    ),
}


@pytest.mark.browser
@pytest.mark.parametrize("kind", list(_HIDDEN))
def test_the_chromium_checker_judges_hidden_target_text(kind: str, browser: Browser) -> None:
    body, fires = _HIDDEN[kind]
    with serve_site(_planted(body), seed=6) as site:
        crawl = crawl_chromium(site, browser, _PLANTED.target_terms)
    problems = label_problems(_PLANTED, [_PLANTED, *EVERY], crawl)
    assert bool(problems) is fires, problems


@pytest.mark.browser
def test_the_chromium_checker_fires_on_a_planted_word(browser: Browser) -> None:
    with serve_site(_planted("<script>document.write('a benchmark');</script>"), seed=7) as site:
        crawl = crawl_chromium(site, browser, _PLANTED.target_terms)
    problems = label_problems(_PLANTED, [_PLANTED, *EVERY], crawl)
    assert any("DOM" in p for p in problems), problems


@pytest.mark.browser
def test_a_self_reloading_page_is_still_read(browser: Browser) -> None:
    reloading = (
        "<p>Checking a benchmark</p><script>setTimeout(() => location.reload(), 150);</script>"
    )
    with serve_site(_planted(reloading), seed=8) as site:
        crawl = crawl_chromium(site, browser, _PLANTED.target_terms)
    problems = label_problems(_PLANTED, [_PLANTED], crawl)
    assert any("DOM" in p and "benchmark" in p for p in problems), problems
