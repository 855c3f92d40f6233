"""Crawl a running case site and check it is label-free.

``crawl_httpx`` follows links, forms and script URLs from the start page;
``site_crawl_chromium.crawl_chromium`` visits the site in headless Chromium. ``label_problems``
checks either crawl against the deny-list (class and truth names, case ids, descriptions,
``MANIFEST_WORDS``, the case's ``forbidden_terms``) and checks that a target term appears
only as visible UI text. An empty list means the site is clean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

import httpx

from pairbench.studies.attribution_reliability._manifest import MANIFEST_WORDS, Case
from pairbench.studies.attribution_reliability.site import NOINDEX, RunningSite

_MAX_REQUESTS = 80
_TEXT_TYPES = ("text/", "application/json", "application/javascript")


@dataclass
class Capture:
    """One response: where it came from, its headers and (for text) its body."""

    via: str
    method: str
    url: str
    status: int
    headers: list[tuple[str, str]]
    body: str


@dataclass
class Crawl:
    captures: list[Capture] = field(default_factory=list)
    cookies: list[str] = field(default_factory=list)
    doms: dict[str, str] = field(default_factory=dict)
    """Rendered DOM per page URL (Chromium only)."""
    hidden_targets: list[str] = field(default_factory=list)
    """Target-term text no hover or click revealed (Chromium only)."""


def words(term: str) -> str:
    return r"\s+".join(re.escape(w) for w in term.split())


def term_pattern(term: str, *, case_sensitive: bool = False) -> re.Pattern[str]:
    """``term`` as a whole word (letters and digits are the word characters)."""
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile(rf"(?<![A-Za-z0-9]){words(term)}(?![A-Za-z0-9])", flags)


def deny_patterns(case: Case, every_case: list[Case]) -> list[re.Pattern[str]]:
    """Everything no page of ``case`` may say."""
    words = ["product_failure", "tester_trap", "environment", "epistemic", "NOT_PRODUCT"]
    words += ["INCONCLUSIVE_EXPECTED", *MANIFEST_WORDS, *case.forbidden_terms]
    words += [c.id for c in every_case]
    patterns = [term_pattern(w) for w in words]
    patterns.append(term_pattern("PRODUCT", case_sensitive=True))
    patterns += [re.compile(re.escape(c.description), re.IGNORECASE) for c in every_case]
    return patterns


def denied(text: str, patterns: list[re.Pattern[str]]) -> list[str]:
    return [m.group(0) for p in patterns if (m := p.search(text))]


class _Page(HTMLParser):
    """Links, forms, script text, attribute values and comments of one HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.forms: list[tuple[str, str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self.attributes: list[str] = []
        self.comments: list[str] = []
        self._in: list[str] = []
        self._form: tuple[str, str, dict[str, str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.attributes += [v for v in a.values() if v]
        for key in ("href", "src", "action"):
            if a.get(key) and tag != "form":
                self.links.append(a[key])
        if tag == "form":
            self._form = (a.get("action", ""), a.get("method", "get").lower(), {})
            self.forms.append(self._form)
        elif tag in ("input", "select", "textarea") and self._form is not None and a.get("name"):
            value = a.get("value") or ("2" if a.get("type") == "checkbox" else "Sam")
            self._form[2].setdefault(a["name"], value)
        if tag in ("script", "style"):
            self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._in:
            self._in.pop()
        if tag == "form":
            self._form = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.scripts.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


_SCRIPT_URL = re.compile(r"""['"`]((?:https?://(?:127\.0\.0\.1|localhost):\d+)?/v/[^'"`\s]*)""")


def same_site(url: str, site: RunningSite) -> bool:
    parts = urlsplit(url)
    main, other = urlsplit(site.start_url), urlsplit(site.other_origin)
    return parts.netloc in (main.netloc, other.netloc) and parts.path.startswith(f"/v/{site.slug}")


def crawl_httpx(site: RunningSite) -> Crawl:
    """Every same-site URL reachable from the start page by links, forms and script URLs."""
    out = Crawl()
    queue: list[tuple[str, str, str | None]] = [("GET", site.start_url, None)]
    seen: set[tuple[str, str]] = set()
    limits = httpx.Limits(max_keepalive_connections=0)  # keep-alive costs ~40 ms a request here
    with httpx.Client(timeout=10.0, follow_redirects=False, limits=limits) as client:
        while queue and len(seen) < _MAX_REQUESTS:
            method, url, body = queue.pop(0)
            if (method, url) in seen or not same_site(url, site):
                continue
            seen.add((method, url))
            try:
                response = client.request(method, url, content=body, headers=_ctype(body))
            except httpx.TimeoutException:
                continue
            text = response.text if is_text(response.headers.get("content-type", "")) else ""
            out.captures.append(
                Capture(
                    "httpx", method, url, response.status_code, list(response.headers.items()), text
                )
            )
            out.cookies += response.headers.get_list("set-cookie")
            if "location" in response.headers:
                queue.append(("GET", urljoin(url, response.headers["location"]), None))
            if "html" in response.headers.get("content-type", ""):
                queue += _next_requests(url, text)
    return out


def _ctype(body: str | None) -> dict[str, str]:
    if body is None:
        return {}
    if body.startswith("{"):
        return {"content-type": "application/json"}
    return {"content-type": "application/x-www-form-urlencoded"}


def is_text(content_type: str) -> bool:
    return any(content_type.startswith(t) for t in _TEXT_TYPES)


def _next_requests(url: str, text: str) -> list[tuple[str, str, str | None]]:
    parsed = _Page()
    parsed.feed(text)
    found: list[tuple[str, str, str | None]] = [
        ("GET", urljoin(url, link.split("#")[0]), None) for link in parsed.links
    ]
    for action, method, fields in parsed.forms:
        target = urljoin(url, action or url)
        if method == "post":
            found.append(("POST", target, urlencode(fields)))
        else:
            found.append(("GET", f"{target.split('?')[0]}?{urlencode(fields)}", None))
    for script in parsed.scripts:
        for path in _SCRIPT_URL.findall(script):
            target = urljoin(url, path)
            found += [("GET", target, None), ("POST", target, "{}")]
    return found


def label_problems(case: Case, every_case: list[Case], crawl: Crawl) -> list[str]:
    """Every way ``crawl`` breaks the label-free rules for ``case`` (empty when clean)."""
    deny = deny_patterns(case, every_case)
    targets = [term_pattern(t) for t in case.target_terms]
    problems: list[str] = []

    def check(where: str, text: str, *, target_free: bool) -> None:
        problems.extend(f"{where}: says {word!r}" for word in denied(text, deny))
        if target_free:
            problems.extend(
                f"{where}: target term {m.group(0)!r} outside visible text"
                for p in targets
                if (m := p.search(text))
            )

    for cap in crawl.captures:
        where = f"{cap.via} {cap.method} {cap.url} ({cap.status})"
        route = urlsplit(cap.url)
        check(
            f"{where} route",
            re.sub(r"[^A-Za-z0-9]+", " ", f"{route.path} {route.query}"),
            target_free=True,
        )
        for name, value in cap.headers:
            check(f"{where} header {name}", f"{name}: {value}", target_free=True)
        if not any(n.lower() == "x-robots-tag" and v == NOINDEX for n, v in cap.headers):
            problems.append(f"{where}: no X-Robots-Tag noindex")
        ctype = dict((n.lower(), v) for n, v in cap.headers).get("content-type", "")
        check(f"{where} body", cap.body, target_free="javascript" in ctype or "css" in ctype)
        if "<html" in cap.body[:200].lower():
            if f'content="{NOINDEX}"' not in cap.body:
                problems.append(f"{where}: no robots meta tag")
            parsed = _Page()
            parsed.feed(cap.body)
            for kind, parts in (
                ("script/style", parsed.scripts),
                ("attribute", parsed.attributes),
                ("comment", parsed.comments),
            ):
                for part in parts:
                    check(f"{where} {kind}", part, target_free=True)
    for cookie in crawl.cookies:
        check("cookie", cookie, target_free=True)
    for url, dom in crawl.doms.items():
        check(f"DOM of {url}", dom, target_free=False)
    problems += [f"target text hidden for good: {t!r}" for t in crawl.hidden_targets]
    return problems


def goal_problems(case: Case, every_case: list[Case]) -> list[str]:
    """A goal obeys the deny-list and names no target term."""
    problems = [f"goal says {w!r}" for w in denied(case.goal, deny_patterns(case, every_case))]
    problems += [
        f"goal names {t!r}" for t in case.target_terms if term_pattern(t).search(case.goal)
    ]
    return problems


__all__ = [
    "Capture",
    "Crawl",
    "crawl_httpx",
    "deny_patterns",
    "goal_problems",
    "is_text",
    "label_problems",
    "same_site",
    "term_pattern",
    "words",
]
