"""No case's page shell tells its class: every case, held-out and calibration, is served in
one shell (``shell_features.class_leaks`` states the rule), and the detector fires on a
planted class-specific shell built from the same kit.

Before the shells were merged, this test listed 29 leaking values on the shipped sites: the
product-failure and tester-trap pages' ``X · Brand`` titles, ``<a class="brand">`` and
stylesheet against the environment and epistemic pages' ``X | Brand``, ``<strong>`` brand,
``<main style="--c">`` and their own stylesheet, the webdriver probe on the six
automation-gate cases only, and the other hosts' bare pages on three environment cases.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from starlette.requests import Request
from starlette.responses import Response

from pairbench.studies.attribution_reliability._manifest import load_cases, load_packages
from pairbench.studies.attribution_reliability.site import (
    SITES,
    CaseSite,
    SiteBuilder,
    SiteContext,
    serve_site,
)
from pairbench.studies.attribution_reliability.site._kit import Handler
from studies.attribution_reliability.shell_features import (
    CaseShell,
    class_leaks,
    mask_words,
    shell_of,
)

# Every case's site served and crawled over HTTP (about 25 s): with the whole runs, out of
# make test-fast.
pytestmark = pytest.mark.whole_run

CASES = load_cases()
PACKAGES = load_packages()


def _shells(
    fixtures: dict[str, str], sites: dict[str, SiteBuilder] | None = None
) -> dict[str, CaseShell]:
    """Each case's shell, served from ``sites`` (by fixture name) or the study's own."""
    out = {}
    for case_id, fixture in fixtures.items():
        builder = (sites or SITES)[fixture]
        with serve_site(builder, seed=13) as site:
            out[case_id] = shell_of(site)
    return out


@pytest.fixture(scope="module")
def case_shells() -> dict[str, CaseShell]:
    return _shells({cid: case.fixture for cid, case in CASES.items()})


def test_every_case_is_crawled_past_its_start_page(case_shells: dict[str, CaseShell]) -> None:
    thin = {cid: s.pages for cid, s in case_shells.items() if len(s.pages) < 2}
    assert thin == {}
    assert all(s.values["title pattern"] for s in case_shells.values())


def test_no_shell_feature_tells_the_class(case_shells: dict[str, CaseShell]) -> None:
    classes = {cid: case.case_class for cid, case in CASES.items()}
    assert class_leaks(case_shells, classes) == []


@pytest.mark.parametrize("case_set", ["held-out", "calibration"])
def test_no_shell_feature_tells_the_class_within_a_set(
    case_shells: dict[str, CaseShell], case_set: str
) -> None:
    chosen = {cid: s for cid, s in case_shells.items() if CASES[cid].set == case_set}
    truths = {cid: CASES[cid].truth for cid in chosen}
    assert class_leaks(chosen, {cid: CASES[cid].case_class for cid in chosen}) == []
    assert class_leaks(chosen, truths) == []


def test_the_package_sites_share_one_shell() -> None:
    fixtures = sorted({p.fixture for p in PACKAGES.values()})
    shells = _shells({f: f for f in fixtures})
    truths = {
        f: "/".join(sorted({p.truth for p in PACKAGES.values() if p.fixture == f}))
        for f in fixtures
    }
    assert class_leaks(shells, truths) == []


# -- the detector fires: a planted class-specific shell, built from the same sites ---------

_PLANTED = ["P01", "P02", "T01", "T02", "E04", "E05", "X01", "X02"]
"""Two cases of each class: enough for the rule, quick to serve."""

Rewrite = Callable[[str], str]


def _planted_sites(rewrite: Rewrite, header: tuple[str, str] | None) -> dict[str, SiteBuilder]:
    """Every ``_PLANTED`` site; the environment cases' pages rewritten and ``header`` added."""
    sites: dict[str, SiteBuilder] = {}
    for cid in _PLANTED:
        case = CASES[cid]
        builder = SITES[case.fixture]
        planted = case.case_class == "environment"
        sites[case.fixture] = _rewritten(builder, rewrite, header) if planted else builder
    return sites


def _rewritten(
    builder: SiteBuilder, rewrite: Rewrite, header: tuple[str, str] | None
) -> SiteBuilder:
    def build(ctx: SiteContext) -> CaseSite:
        site = builder(ctx)

        def wrap(handler: Handler) -> Handler:
            async def answer(request: Request) -> Response:
                response = await handler(request)
                if "html" in response.headers.get("content-type", ""):
                    body = rewrite(bytes(response.body).decode())
                    response = Response(body, response.status_code, media_type="text/html")
                if header is not None:
                    response.headers[header[0]] = header[1]
                return response

            return answer

        return CaseSite(
            routes={k: wrap(h) for k, h in site.routes.items()},
            other_routes={k: wrap(h) for k, h in site.other_routes.items()},
            automation_gate=site.automation_gate,
        )

    return build


def _same(html: str) -> str:
    return html


_PLANTS: dict[str, tuple[Rewrite, tuple[str, str] | None, str]] = {
    "an extra head meta tag": (
        lambda html: html.replace("</head>", '<meta name="generator" content="Shop 2"></head>'),
        None,
        "head tags",
    ),
    "another title separator": (
        lambda html: re.sub(r" · ([^<]*)</title>", r" | \1</title>", html),
        None,
        "title pattern",
    ),
    "a strong brand": (
        lambda html: html.replace('<a class="brand"', '<strong class="brand"', 1),
        None,
        "outline",
    ),
    "an inline style on main": (
        lambda html: html.replace("<main>", '<main style="--c:#123456">'),
        None,
        "outline",
    ),
    "a script only one class loads": (
        lambda html: html.replace("</head>", "<script>var probe = 1;</script></head>"),
        None,
        "shell scripts",
    ),
    "a stylesheet URL only one class loads": (
        lambda html: html.replace("</head>", '<link rel="stylesheet" href="/v/x.css"></head>'),
        None,
        "asset urls",
    ),
    "a body class": (
        lambda html: html.replace("<body>", '<body class="shop">'),
        None,
        "root attributes",
    ),
    "a header only one class sends": (_same, ("Cache-Control", "no-store"), "response headers"),
}


@pytest.mark.parametrize("kind", list(_PLANTS))
def test_the_detector_fires_on_a_planted_class_shell(kind: str) -> None:
    rewrite, header, feature = _PLANTS[kind]
    fixtures = {cid: CASES[cid].fixture for cid in _PLANTED}
    shells = _shells(fixtures, _planted_sites(rewrite, header))
    leaks = class_leaks(shells, {cid: CASES[cid].case_class for cid in _PLANTED})
    planted = [leak for leak in leaks if leak.startswith(f"{feature}:")]
    assert any("environment 2/2" in leak for leak in planted), leaks


def test_the_detector_stays_quiet_on_the_unplanted_subset() -> None:
    fixtures = {cid: CASES[cid].fixture for cid in _PLANTED}
    shells = _shells(fixtures)
    assert class_leaks(shells, {cid: CASES[cid].case_class for cid in _PLANTED}) == []


def test_title_words_are_masked_and_separators_kept() -> None:
    assert mask_words("Book a service · Spoke & Chain Cycles") == "X · X"
    assert mask_words("Order | Moss & Fern") == "X | X"
    assert mask_words("  © Fern & Pot · House plants  ") == "©X · X"
    assert mask_words("Just a moment...") == "X"


def test_the_rule_fires_on_a_value_every_class_shows_at_other_rates() -> None:
    # A value on some cases of every class still tells something (how often): it fails.
    def shell(*titles: str) -> CaseShell:
        made = CaseShell()
        made.values["title pattern"] = set(titles)
        return made

    shells = {"a1": shell("X · X"), "a2": shell("X · X"), "b1": shell("X · X"), "b2": shell()}
    leaks = class_leaks(shells, {"a1": "a", "a2": "a", "b1": "b", "b2": "b"})
    assert leaks == ["title pattern: 'X · X' on a 2/2, b 1/2 (a1, a2, b1)"]
    assert class_leaks({k: shell("X · X") for k in shells}, dict.fromkeys(shells, "a")) == []
