"""The page shell of a running case site, as features an engine could read off it.

``shell_of`` fetches the start page and every same-site page reachable by ``<a href>`` links
(both origins, GET, no scripts run, as a person's plain browser: no webdriver cookie, so the
bot walls' own pages are not shell) over real HTTP, and reduces each response to the shell
features listed in ``FEATURES``: what the page is wrapped in, with whatever belongs to the
case (its words, its colour, its slug and ports) masked. ``class_leaks`` says which features
tell one group of cases from another.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

import httpx

from pairbench.studies.attribution_reliability.site import RunningSite
from studies.attribution_reliability.site_crawl import same_site

FEATURES = (
    "title pattern",
    "head tags",
    "head style",
    "shell scripts",
    "outline",
    "chrome text",
    "root attributes",
    "asset urls",
    "response headers",
)
"""``title pattern``: the title with its words masked (separators kept); ``head tags``: each
head element with its fixed attributes; ``head style``: its text (colours masked);
``shell scripts``: inline scripts in the head or in the body outside ``<main>`` (a script
inside ``<main>`` is the page's own content, the case's mechanism); ``outline``: every
element outside ``<main>`` (tag, classes, attribute names, the property names of a
``style`` attribute): the brand markup, the nav, the footer; ``chrome text``: the header's
and footer's text with its words masked; ``root attributes``: ``<html>`` and ``<body>``
attributes (lang, class, style); ``asset urls``: script and stylesheet URLs anywhere on the
page (slug and origin masked); ``response headers``: names, with values for those that do
not change from response to response."""

_MAX_PAGES = 40
_SEPARATORS = re.compile(r"(\s[·|—–]\s|©)")
_COLOUR = re.compile(r"#[0-9a-fA-F]{3,8}\b")
_VOLATILE_HEADERS = frozenset({"date", "content-length", "location", "set-cookie", "etag"})
_STRUCTURE = frozenset({"html", "body", "header", "nav", "footer", "main"})


def mask_words(text: str) -> str:
    """``text`` with every run between separators (`` · ``, `` | ``, `` — ``, ``©``) as ``X``.

    >>> mask_words("Book a service · Spoke & Chain Cycles")
    'X · X'
    """
    parts = _SEPARATORS.split(" ".join(text.split()))
    return "".join(p if _SEPARATORS.fullmatch(p) else ("X" if p.strip() else "") for p in parts)


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


class _Shell(HTMLParser):
    """One HTML page's shell features (``values``) and its links (``links``)."""

    def __init__(self, site: RunningSite) -> None:
        super().__init__(convert_charrefs=True)
        self.site = site
        self.values: dict[str, set[str]] = defaultdict(set)
        self.links: list[str] = []
        self._stack: list[str] = []
        self._title: list[str] = []
        self._raw: list[str] = []
        self._chrome: list[str] = []

    def _where(self) -> str:
        return ">".join(self._stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag in ("script", "link") and (a.get("src") or a.get("href")):
            self.values["asset urls"].add(f"{tag} {a.get('src') or a.get('href')}")
        in_main = "main" in self._stack
        if tag in ("html", "body"):
            self.values["root attributes"].add(f"{tag} {sorted(a.items())}")
        if "head" in self._stack and tag != "head":
            fixed = {k: v for k, v in a.items() if k not in ("href", "src") or v.startswith("data")}
            self.values["head tags"].add(f"{tag} {sorted(fixed.items())}")
        elif not in_main and tag not in ("html", "head"):
            self.values["outline"].add(f"{self._where()}>{tag}{_attributes(a)}")
        if tag in _STRUCTURE and "style" in a:
            self.values["outline"].add(f"{tag} style({_properties(a['style'])})")
        if tag not in _VOID:
            self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag not in self._stack:
            return
        while self._stack and self._stack.pop() != tag:
            pass
        if tag in ("style", "script", "title"):
            text = _unslug("".join(self._raw), self.site)
            self._raw = []
            if tag == "title":
                self.values["title pattern"].add(mask_words(text))
            elif tag == "style" and "head" in self._stack:
                self.values["head style"].add(_short(_COLOUR.sub("#colour", text)))
            elif tag == "script" and "main" not in self._stack:
                self.values["shell scripts"].add(_short(text))
        if tag in ("header", "footer"):
            self.values["chrome text"].add(f"{tag}: {mask_words(' '.join(self._chrome))}")
            self._chrome = []

    def handle_data(self, data: str) -> None:
        if self._stack and self._stack[-1] in ("style", "script", "title"):
            self._raw.append(data)
        elif {"header", "footer"} & set(self._stack) and data.strip():
            self._chrome.append(data.strip())


_VOID = frozenset({"meta", "link", "br", "img", "input", "hr", "source", "wbr", "area", "col"})


def _attributes(a: Mapping[str, str]) -> str:
    classes = "".join(f".{c}" for c in sorted(a.get("class", "").split()))
    names = ",".join(sorted(k for k in a if k != "class"))
    return f"{classes}[{names}]" if names else classes


def _properties(style: str) -> str:
    return ",".join(sorted(p.split(":")[0].strip() for p in style.split(";") if ":" in p))


@dataclass
class CaseShell:
    """What one case's pages show of each feature (the union over its pages)."""

    values: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    pages: list[str] = field(default_factory=list)


def shell_of(site: RunningSite) -> CaseShell:
    """The shell features of every page reachable from ``site``'s start page by links."""
    out = CaseShell()
    queue, seen = [site.start_url], set[str]()
    limits = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(timeout=10.0, follow_redirects=False, limits=limits) as client:
        while queue and len(seen) < _MAX_PAGES:
            url = queue.pop(0).split("#")[0]
            if url in seen or not same_site(url, site):
                continue
            seen.add(url)
            response = client.get(url)
            out.pages.append(f"{response.status_code} {url}")
            for name, value in sorted(response.headers.items()):
                shown = name if name in _VOLATILE_HEADERS else f"{name}: {value}"
                out.values["response headers"].add(shown)
            if "location" in response.headers:
                queue.append(urljoin(url, response.headers["location"]))
            if "html" not in response.headers.get("content-type", ""):
                continue
            parsed = _Shell(site)
            parsed.feed(response.text)
            queue += [urljoin(url, link) for link in parsed.links]
            for name, values in parsed.values.items():
                out.values[name] |= {_unslug(v, site) for v in values}
    return out


def _unslug(value: str, site: RunningSite) -> str:
    value = re.sub(r"https?://(?:127\.0\.0\.1|localhost):\d+", "{origin}", value)
    return value.replace(site.slug, "{slug}")


def class_leaks(shells: Mapping[str, CaseShell], group: Mapping[str, str]) -> list[str]:
    """Every feature value that tells cases apart, with the groups of the cases showing it.

    The rule (strict on purpose): for each feature, every case must show the *same set* of
    values. Then no value can separate one group (class) from another, at any frequency: a
    value seen only on one class's pages, or on all product pages and a single other one,
    or on some cases of every class, all fail. (A shell drawn from the trial seed would need
    a rule over many seeds; the sites use one shell, so the strict rule applies.) An empty
    list means the shells carry no information about ``group``.
    """
    problems: list[str] = []
    cases = sorted(shells)
    for feature in FEATURES:
        every = set().union(*(shells[c].values.get(feature, set()) for c in cases))
        for value in sorted(every):
            showing = [c for c in cases if value in shells[c].values.get(feature, set())]
            if len(showing) == len(cases):
                continue
            counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for c in cases:
                counts[group[c]][1] += 1
                counts[group[c]][0] += c in showing
            split = ", ".join(f"{g} {k}/{n}" for g, (k, n) in sorted(counts.items()))
            problems.append(f"{feature}: {value!r} on {split} ({', '.join(showing[:6])})")
    return problems


__all__ = ["FEATURES", "CaseShell", "class_leaks", "mask_words", "shell_of"]
