"""The evidence packages' manifest and sites: shape, planted sentences, anchors on routes
(an httpx crawl), and a label-free check of every package site."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from functools import cache
from html.parser import HTMLParser

import httpx
import pytest

from pairbench.studies.attribution_reliability._manifest import (
    MANIFEST_WORDS,
    Package,
    load_packages,
)
from pairbench.studies.attribution_reliability._scripted import ACTIONS, sentence_user
from pairbench.studies.attribution_reliability.site import SITES, SiteContext, serve_case
from pairbench.studies.attribution_reliability.site._packages import BUILDERS

pytestmark = pytest.mark.browser

PACKAGES = load_packages()
HELD_OUT = [f"K{i:02d}" for i in range(1, 21)]
CALIBRATION = ["C-K01", "C-K04", "C-K05", "C-K06", "C-K10", "C-K12", "C-K13", "C-K14"]
KINDS = [
    "unsupported_submit_claim",
    "unsupported_creation_claim",
    "unsupported_count_claim",
    "completion_after_hand_miss",
    "blame_after_safety_refusal",
    "absence_after_guessed_url",
    "cant_find_after_reasonable_search",
    "cant_find_after_insufficient_search",
    "gate_blamed_on_product",
    "genuine_failure",
    "subjective_reaction_only",
    "valid_success",
    "stale_narration",
    "shared_cause_two_users",
    "two_independent_reproductions",
    "collapsed_content_never_opened",
    "explicit_product_error",
    "delayed_success",
    "hand_miss_then_recovery",
    "unsupported_claim_with_valid_reaction",
]
PRODUCT_KINDS = {
    "genuine_failure",
    "explicit_product_error",
    "shared_cause_two_users",
    "two_independent_reproductions",
}
CLASS_AND_TRUTH = (
    "product_failure",
    "tester_trap",
    "environment",
    "epistemic",
    "PRODUCT",
    "NOT_PRODUCT",
    "INCONCLUSIVE_EXPECTED",
)
HEADLESS_UA = "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/156.0.0.0 Safari/537.36"


def test_manifest_loads_28_packages_in_order() -> None:
    assert list(PACKAGES) == HELD_OUT + CALIBRATION
    assert [p.kind for p in PACKAGES.values()][:20] == KINDS
    for cid in CALIBRATION:
        assert PACKAGES[cid].kind == PACKAGES[cid.removeprefix("C-")].kind
        assert PACKAGES[cid].set == "calibration"
    assert {p.set for p in PACKAGES.values() if p.id in HELD_OUT} == {"held-out"}


@pytest.mark.parametrize("pid", list(PACKAGES))
def test_package_is_well_formed(pid: str) -> None:
    package = PACKAGES[pid]
    assert package.fixture in BUILDERS and package.fixture in SITES
    if package.kind in PRODUCT_KINDS:
        assert package.truth == "PRODUCT"
    else:
        assert package.truth in ("NOT_PRODUCT", "INCONCLUSIVE_EXPECTED")
    assert package.allows_finding == (package.truth == "INCONCLUSIVE_EXPECTED")
    assert any(s.planted for s in package.sentences)
    users = {u.user: u for u in package.users}
    assert len(users) == len(package.users)
    for user in package.users:
        assert user.steps and all(step.do in ACTIONS for step in user.steps)
    for sentence in package.sentences:
        owner = users[sentence_user(sentence, package.users)]
        assert 0 <= sentence.after_step < len(owner.steps), sentence.sid
        if "." in sentence.sid:
            assert sentence.sid.split(".")[0] in users
        if sentence.planted:
            assert sentence.anchors, f"{sentence.sid}: a planted sentence needs an anchor"
            for anchor in sentence.anchors:
                assert norm(anchor) in norm(sentence.text)
    sids = [s.sid for s in package.sentences]
    assert len(sids) == len(set(sids))


def test_planted_sentences_cover_both_kinds() -> None:
    planted = [s.planted for p in PACKAGES.values() for s in p.sentences]
    assert {"unsupported", "valid"} <= set(planted)
    held_out_unsupported = [
        s for pid in HELD_OUT for s in PACKAGES[pid].sentences if s.planted == "unsupported"
    ]
    assert len(held_out_unsupported) >= 20


def test_planned_misses_are_where_the_kind_says() -> None:
    misses = {p.id for p in PACKAGES.values() for u in p.users for s in u.steps if "xy=" in s.on}
    assert misses == {"K04", "K19", "C-K04"}


# --- crawling ------------------------------------------------------------------------------


def norm(text: str) -> str:
    """The scorer's normalization, near enough: casefold, quotes gone, spaces collapsed."""
    text = re.sub(r"[\"'\u2018\u2019\u201c\u201d]", "", html.unescape(text).casefold())
    return re.sub(r"\s+", " ", text).strip()


class Page(dict[str, str]):
    """One crawled response: ``body``, ``headers`` (flattened), ``visible`` text."""


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible_text(body: str) -> str:
    parser = _Visible()
    parser.feed(body)
    return " ".join(parser.parts)


@cache
def crawl(fixture: str) -> dict[str, Page]:
    """Every GET route of the site, as an ordinary client and as a headless browser."""
    with serve_case(fixture, seed=11) as site:
        ctx = SiteContext(slug=site.slug, base=f"/v/{site.slug}", other_origin="", seed=11)
        built = SITES[fixture](ctx)
        paths = [k for k in [*built.routes, *built.other_routes] if " " not in k]
        pages: dict[str, Page] = {}
        with httpx.Client(timeout=10) as client:
            for path in paths:
                for who, ua in (("plain", "Mozilla/5.0 (X11; Linux x86_64)"), ("bot", HEADLESS_UA)):
                    origin = site.start_url if path in built.routes else site.other_origin
                    url = origin + (path if path in built.routes else f"/v/{site.slug}{path}")
                    r = client.get(url, headers={"User-Agent": ua})
                    headers = "\n".join(f"{k}: {v}" for k, v in r.headers.items())
                    pages[f"{who} {path}"] = Page(
                        path=path, body=r.text, headers=headers, visible=visible_text(r.text)
                    )
    return pages


def _fixtures() -> list[str]:
    return sorted({p.fixture for p in PACKAGES.values()})


@pytest.mark.parametrize("pid", list(PACKAGES))
def test_anchors_follow_the_rule_on_every_route(pid: str) -> None:
    package = PACKAGES[pid]
    texts = [norm(page["body"]) for page in crawl(package.fixture).values()]
    for sentence in package.sentences:
        for anchor in sentence.anchors:
            where = [t for t in texts if norm(anchor) in t]
            if sentence.planted == "unsupported":
                assert not where, f"{sentence.sid}: unsupported anchor {anchor!r} is served"
            elif sentence.planted == "valid":
                assert where, f"{sentence.sid}: valid anchor {anchor!r} is on no route"


# --- label-free ------------------------------------------------------------------------------


def deny_list(packages: list[Package]) -> list[str]:
    """Words no part of a package site may contain (matched on word boundaries)."""
    words = [*CLASS_AND_TRUTH, *MANIFEST_WORDS]
    for package in packages:
        words += [package.id, package.kind, package.description, *package.forbidden_terms]
        words += [u.user for u in package.users if len(u.user) > 2]
    return words


def label_leaks(pages: dict[str, Page], packages: list[Package]) -> list[str]:
    """Every deny-list word in a body, header or route; every target term outside visible
    copy (in a route, attribute, script, style or header)."""
    leaks = []
    for key, page in pages.items():
        served = "\n".join((page["path"], page["body"], page["headers"]))
        for word in deny_list(packages):
            if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", served, re.IGNORECASE):
                leaks.append(f"{key}: {word!r}")
        for term in {t for p in packages for t in p.target_terms}:
            pattern = re.compile(rf"(?<!\w){re.escape(norm(term))}(?!\w)")
            hidden = len(pattern.findall(norm(served))) - len(
                pattern.findall(norm(page["visible"]))
            )
            if hidden > 0:
                leaks.append(f"{key}: target term {term!r} outside visible copy")
    return leaks


@pytest.mark.parametrize("fixture", _fixtures())
def test_package_sites_are_label_free(fixture: str) -> None:
    users = [p for p in PACKAGES.values() if p.fixture == fixture]
    pages = crawl(fixture)
    assert label_leaks(pages, users) == []
    assert all("noindex" in p["headers"] for p in pages.values())
    assert all("set-cookie" not in p["headers"].lower() for p in pages.values())


def test_goals_are_label_free() -> None:
    # A goal may name what the user wants (a phone number), as the end-to-end goals do;
    # never a manifest word.
    for package in PACKAGES.values():
        words = deny_list([package])
        for user in package.users:
            for word in words:
                assert not re.search(rf"(?<!\w){re.escape(word)}(?!\w)", user.goal, re.I), (
                    package.id,
                    word,
                )


def _page(body: str, path: str = "/x") -> dict[str, Page]:
    return {"plain " + path: Page(path=path, body=body, headers="", visible=visible_text(body))}


def test_label_checker_fires_on_leaks() -> None:
    package = PACKAGES["K01"]
    assert label_leaks(_page("<p>Order K01 now</p>"), [package]) == ["plain /x: 'K01'"]
    assert label_leaks(_page("<p>a fixture</p>"), [package]) == ["plain /x: 'fixture'"]
    hidden = _page("<button data-x='Place order'>Go</button>")
    assert label_leaks(hidden, [package]) == [
        "plain /x: target term 'Place order' outside visible copy"
    ]
    scripted = _page("<script>var t='Place order';</script><button>Place order</button>")
    assert len(label_leaks(scripted, [package])) == 1


def test_label_checker_stays_quiet_on_plain_copy() -> None:
    package = PACKAGES["K01"]
    clean = _page("<h1>Order a cake</h1><button>Place order</button><p>Fixtures &amp; co</p>")
    # "Fixtures" is not the word "fixture": word boundaries, as the deny-list says.
    assert label_leaks(clean, [package]) == []


def test_served_sites_answer_their_routes() -> None:
    pages = crawl("pk-harbour")
    assert "could not verify your browser" in pages["bot /search"]["body"]
    assert "Next trains" in pages["plain /search"]["body"]


def _iter_targets() -> Iterator[tuple[str, str]]:
    for package in PACKAGES.values():
        for term in package.target_terms:
            yield package.id, term


def test_target_terms_that_exist_are_visible_somewhere() -> None:
    missing = [
        (pid, term)
        for pid, term in _iter_targets()
        if PACKAGES[pid].target_exists
        and not any(norm(term) in norm(p["visible"]) for p in crawl(PACKAGES[pid].fixture).values())
    ]
    assert missing == []
