"""Test-only probes for the environment and epistemic sites: an httpx crawl of every route of
a case (both origins, forms posted filled in) and the label-free rules applied to it.

The generic crawl test (``site_crawl.py``) covers every case after the merge; this one
checks the sites-ex cases on their own, so a slip is caught where it is made.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from html.parser import HTMLParser

import httpx
from playwright.sync_api import Browser

from pairbench.studies.attribution_reliability._manifest import (
    MANIFEST_WORDS,
    Case,
    load_cases,
)
from pairbench.studies.attribution_reliability.site import SITES, SiteContext, serve_case

DESKTOP_UA = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
HEADLESS_UA = DESKTOP_UA.replace("Chrome/", "HeadlessChrome/")

QUERIES = {
    "/find": ["?q=glue"],
    "/catalogue": ["?q=salt"],
    "/tents": [f"?page={n}" for n in range(1, 9)],
}
"""Query strings a visitor's search or paging would add to these routes."""
HELD = ("/find", "/catalogue")
"""Searches that answer automated browsers only after 28 s."""

PHONE_LIKE = re.compile(r"\+?\(?\d[\d\s().\-/]{5,}\d")
"""Seven or more digits with the separators phone numbers use."""


@dataclass(frozen=True)
class Fetched:
    origin: str
    route: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: str
    walled: bool = False
    """Fetched with the cookie the webdriver check sets."""


class _Split(HTMLParser):
    """Visible text nodes apart from everything else a page carries."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.other: list[str] = []
        self.fields: dict[str, str] = {}
        self._raw = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.other.extend(f"{k}={v or ''}" for k, v in attrs)
        named = dict(attrs)
        if tag in ("input", "textarea") and named.get("name"):
            self.fields[named["name"] or ""] = named.get("type") or tag
        if tag in ("script", "style", "title"):
            self._raw += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "title"):
            self._raw -= 1

    def handle_data(self, data: str) -> None:
        (self.other if self._raw else self.text).append(data)

    def handle_comment(self, data: str) -> None:
        self.other.append(data)


def split(body: str) -> _Split:
    parser = _Split()
    parser.feed(body)
    return parser


def crawl(case: Case, seed: int = 11) -> list[Fetched]:
    """Every route of ``case``'s site on both origins (desktop UA), forms posted filled in,
    as a person and, on a gated site, again with the webdriver cookie (walls answer then; a
    held search is left out of that pass, as it only answers 28 s later). Cached per case."""
    return list(_crawl(case.id, case.fixture, seed))


@functools.cache
def _crawl(case_id: str, fixture: str, seed: int) -> tuple[Fetched, ...]:
    out: list[Fetched] = []
    with serve_case(fixture, seed) as site:
        base = site.start_url[: -len(f"/v/{site.slug}")]
        ctx = SiteContext(site.slug, f"/v/{site.slug}", site.other_origin, seed)
        built = SITES[fixture](ctx)
        origins = [("main", base, built.routes), ("other", site.other_origin, built.other_routes)]
        for walled in (False, True) if built.automation_gate else (False,):
            cookies = {"sid2": "1"} if walled else None
            with httpx.Client(headers={"User-Agent": DESKTOP_UA}, cookies=cookies, timeout=10) as c:
                for origin, root, routes in origins:
                    for key in routes:
                        method, _, path = key.rpartition(" ")
                        if walled and path in HELD:
                            continue
                        for r in _fetch(c, method, f"{root}{ctx.base}{path}", path):
                            headers = tuple(r.headers.multi_items())
                            out.append(Fetched(origin, key, r.status_code, headers, r.text, walled))
    return tuple(out)


def _fetch(c: httpx.Client, method: str, url: str, path: str) -> list[httpx.Response]:
    if method != "POST":
        return [c.get(url + q) for q in QUERIES.get(path, [""])]
    fields = split(c.get(url).text).fields
    data = {k: "Ada 4471" for k, t in fields.items() if t != "file"}
    files = {
        k: ("me.pdf", b"%PDF-1.4", "application/pdf") for k, t in fields.items() if t == "file"
    }
    return [c.post(url, data=data, files=files or None), c.post(url)]


def warm_up(browser: Browser) -> None:
    """Load one page, so Chromium's helper processes (network, storage, GPU) start with the
    module's browser, not inside the first test (whose child-process guard would count them)."""
    context = browser.new_context()
    try:
        context.new_page().goto("data:text/html,<p>ok</p><script>document.cookie='a=1'</script>")
    finally:
        context.close()


def _word(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(term)}(?![\w])", re.IGNORECASE)


def deny_list(case: Case, every: dict[str, Case]) -> list[re.Pattern[str]]:
    words = ["product_failure", "tester_trap", "environment", "epistemic", "NOT_PRODUCT",
             "INCONCLUSIVE_EXPECTED", *MANIFEST_WORDS, *case.forbidden_terms]  # fmt: skip
    words += [c.id for c in every.values()] + [c.description for c in every.values()]
    return [_word(w) for w in words] + [re.compile(r"(?<!\w)PRODUCT(?!\w)")]


def label_free_problems(case: Case, pages: list[Fetched], every: dict[str, Case]) -> list[str]:
    """Every breach of the label-free rules on ``pages`` (empty when the site is clean)."""
    problems: list[str] = []
    deny = deny_list(case, every)
    targets = [_word(t) for t in case.target_terms]
    for p in pages:
        parts = split(p.body)
        hidden = [p.route, *(f"{k}: {v}" for k, v in p.headers), *parts.other]
        for pattern in deny:
            for text in [*hidden, *parts.text]:
                if pattern.search(text):
                    problems.append(f"{case.id} {p.origin}{p.route}: {pattern.pattern!r}")
        for pattern in targets:
            problems += [f"{case.id} {p.origin}{p.route}: target {pattern.pattern!r} in {t!r}"
                         for t in hidden if pattern.search(t)]  # fmt: skip
    for pattern in deny:
        if pattern.search(case.goal):
            problems.append(f"{case.id} goal: {pattern.pattern!r}")
    problems += [f"{case.id} goal names {t!r}" for t in case.target_terms
                 if t.casefold() in case.goal.casefold()]  # fmt: skip
    return problems


def cases_of(*prefixes: str) -> list[Case]:
    return [c for c in load_cases().values() if c.id.startswith(prefixes)]
