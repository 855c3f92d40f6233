"""The scorer's reading of the site's audit: where the user met the target, and how much of
a served page a finding's evidence pasted.

Met the target (recall's conditional form, protocol §5 metric 3) is read from what the site
served the engine, never from the engine's own observations (those are shown beside): a
request on one of the case's encounter paths, or an encounter term in the words a response
to the engine showed. Evidence stuffing changes no number: each finding's evidence length
and the share of a page's distinct words it holds are shown beside the score, and findings
above the run's declared share are listed.

**Usage**::

    met, hits = site_met_target(record, case)
    stats = evidence_stats(report.findings, record.visit, threshold=0.5)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pairbench.studies.attribution_reliability._manifest import Case
from pairbench.studies.attribution_reliability._score_models import (
    FindingEvidence,
    SessionRecord,
)
from pairbench.studies.attribution_reliability._score_text import mentions, norm, path_matches
from pairbench.studies.attribution_reliability._visit import SiteVisit
from pairbench.studies.attribution_reliability.engines._models import Finding

DEFAULT_STUFFING_SHARE = 0.5
"""A finding's evidence holding more than half a page's distinct words pasted the page: a
quoted label, an error message or a sentence covers a few per cent of a real page."""
MIN_PAGE_WORDS = 30
"""A response with fewer distinct words (a JSON reply, an error line) is too short to tell a
quote from a paste: the share is shown, never listed."""
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(norm(text)))


def _plain(path: str) -> str:
    # The second origin serves the same paths; an encounter path names either.
    return path.removeprefix("other:")


def site_met_target(record: SessionRecord, case: Case) -> tuple[bool, list[str]]:
    """Whether the site saw the engine meet ``case``'s target, and the engine's requests
    on its encounter paths. Without a visit record (evidence from before it), the audit's
    paths alone (the preflight's included) are what there is."""
    visit = record.visit
    if visit is None:
        hits = [p for p in record.audit_paths if path_matches(_plain(p), case.encounter_paths)]
        return bool(hits), hits
    hits = list(
        dict.fromkeys(
            h.path for h in visit.hits if path_matches(_plain(h.path), case.encounter_paths)
        )
    )
    served = [p.text for p in visit.texts if p.by == "engine"]
    return bool(hits) or mentions(served, case.encounter_terms), hits


def evidence_stats(
    findings: Iterable[Finding], visit: SiteVisit | None, threshold: float
) -> list[FindingEvidence]:
    """Per finding: its evidence's length and the largest share of a page's distinct words
    it holds, over every page the session served or was handed (see the module docstring)."""
    pages = [(p.path, _words(p.text)) for p in (visit.texts if visit else [])]
    out = []
    for f in findings:
        said = _words(f.evidence.text)
        # A long page first, then the largest share: a short reply fully quoted must not
        # hide a long page pasted whole.
        scored = [
            (len(words) >= MIN_PAGE_WORDS, len(said & words) / len(words), path, len(words))
            for path, words in pages
            if words
        ]
        _, share, page, n_words = max(scored, default=(False, 0.0, None, 0))
        out.append(
            FindingEvidence(
                finding=f.id,
                chars=len(f.evidence.text),
                page=page,
                page_words=n_words,
                share=round(share, 4),
                stuffing=share > threshold and n_words >= MIN_PAGE_WORDS,
            )
        )
    return out
