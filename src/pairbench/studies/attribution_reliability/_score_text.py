"""The scorer's text rules: normalization, supported findings, reach and met-the-target.

Every rule is a substring test over ``norm()``-ed text, so it is blind to case, quoting
style, Unicode compatibility forms and spacing, and to nothing else.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from pairbench.studies.attribution_reliability._manifest import Case, Package
from pairbench.studies.attribution_reliability.engines._models import (
    EngineReport,
    Finding,
    Observation,
)

_QUOTES = str.maketrans("", "", "'\"‘’“”`´")
_SPACE = re.compile(r"\s+")
_SLUG_PREFIX = re.compile(r"^/v/[^/]+")


def norm(text: str) -> str:
    """NFKC, casefold, quotes deleted, whitespace collapsed.

    **Usage**::

        norm("  “Place  Order” ")  # 'place order'
    """
    # Quotes go before NFKC too: NFKC turns ``´`` into a space and a combining accent,
    # which the deletion after it would no longer see (full-width quotes need the after).
    folded = unicodedata.normalize("NFKC", text.translate(_QUOTES)).casefold().translate(_QUOTES)
    return _SPACE.sub(" ", folded).strip()


def finding_texts(finding: Finding) -> tuple[str, ...]:
    """The six fields a target term may appear in."""
    return (
        finding.headline,
        finding.what_happened,
        finding.why_it_matters,
        finding.confidence_note,
        finding.expectation,
        finding.evidence.text,
    )


def mentions(texts: Iterable[str], terms: Iterable[str]) -> bool:
    """Some normalized term is a substring of some normalized text (empty terms never match)."""
    normed = [norm(t) for t in texts]
    return any(n and any(n in t for t in normed) for n in (norm(term) for term in terms))


def supported(finding: Finding, item: Case | Package) -> bool:
    """The protocol's supported finding (§5): truth allows blame, on target, in scope."""
    truth_allows = item.truth == "PRODUCT" or (
        item.truth == "INCONCLUSIVE_EXPECTED" and item.allows_finding
    )
    return (
        truth_allows
        and finding.claim_scope in item.allowed_scopes
        and mentions(finding_texts(finding), item.target_terms)
    )


def site_path(page_url: str) -> str:
    """A page URL's path with the case's ``/v/<slug>`` prefix removed (``/`` at the root)."""
    path = urlsplit(page_url).path if "://" in page_url else page_url.split("?")[0]
    return _SLUG_PREFIX.sub("", path) or "/"


def path_matches(path: str, globs: Sequence[str]) -> bool:
    return any(fnmatchcase(path, g) for g in globs)


def met_target(observations: Iterable[Observation], case: Case) -> bool:
    """The user demonstrably met the target: an encounter term in what they aimed at,
    reached or saw, or a page on an encounter path."""
    for obs in observations:
        if mentions((obs.target, obs.reached_element, obs.outcome_text), case.encounter_terms):
            return True
        if obs.page_url and path_matches(site_path(obs.page_url), case.encounter_paths):
            return True
    return False


def reaches(sentence: str, anchors: Iterable[str], text: str) -> bool:
    """A planted sentence reaches ``text`` when it, or any of its anchors, is in it."""
    target = norm(text)
    return any(n and n in target for n in (norm(s) for s in (sentence, *anchors)))


def founder_facing(report: EngineReport) -> list[str]:
    """Kept quotes the product would show: under a published finding citing their user."""
    cited = {u for f in report.findings for u in f.evidence.users}
    return [q.text for q in report.quote_pool if q.status == "kept" and q.user in cited]
