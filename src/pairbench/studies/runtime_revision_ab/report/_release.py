"""The release gate: every gate over every candidate campaign, and every review note the
protocol requires.

The protocol keeps security invariants, truthful completion and demonstrated regressions
release gates whatever the aggregate says, and has AR-005, AR-006 and AR-009 audited in
every comparison. So a required review note (``manual_review.json``) that is missing is not
only mentioned: it blocks the release ("blocked: review note missing for AR-005"), as a
failing gate fails it. A note never changes a number.

**Usage**::

    verdict = release([*gate_rows, review_gate(tasks, labels, notes, regressed)])
    verdict["status"], verdict["statement"]   # "blocked", "blocked: review note missing for AR-005"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.studies import ReviewNote
from pairbench.studies.runtime_revision_ab._regression import RegressionRule
from pairbench.studies.runtime_revision_ab.report._gates import (
    ALWAYS_REVIEWED,
    note_for,
    required_reviews,
)

REVIEW_GATE = "review_notes"
REVIEW_TITLE = (
    f"every required review note given ({', '.join(ALWAYS_REVIEWED)} and each demonstrated "
    "regression)"
)
PASSED = (
    "pass: every gate passed in every candidate campaign and every required review note is given"
)


def review_gate(
    tasks: Sequence[str],
    labels: Mapping[str, str],
    notes: Mapping[str, ReviewNote],
    regressed: Mapping[str, list[int]],
) -> dict[str, Any]:
    """The review-notes gate: ``blocked`` while any required note is missing (its scenarios
    in ``blocked``), else ``pass``. It is judged over the run, not per campaign."""
    required = required_reviews(tasks, labels, regressed)
    blocked = [labels[t] for t in required if note_for(notes, labels[t], t) is None]
    return {
        "gate": REVIEW_GATE,
        "title": REVIEW_TITLE,
        "status": "blocked" if blocked else "pass",
        "campaigns": [],
        "blocked": blocked,
    }


def release(gates: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The release gate over every gate: ``fail`` when one fails, else ``blocked`` when a
    required note is missing, else ``missing`` when a gate lacks evidence, else ``pass``;
    the statement names every reason, not only the first."""
    failing = [str(g["title"]) for g in gates if g["status"] == "fail"]
    blocked = [str(s) for g in gates for s in g.get("blocked", [])]
    missing = [str(g["title"]) for g in gates if g["status"] == "missing"]
    parts = []
    if failing:
        parts.append("fail: " + ", ".join(failing))
    if blocked:
        parts.append("blocked: review note missing for " + ", ".join(blocked))
    if missing:
        parts.append("missing evidence: " + ", ".join(missing))
    status = "fail" if failing else "blocked" if blocked else "missing" if missing else "pass"
    return {
        "status": status,
        "statement": "; ".join(parts) or PASSED,
        "failing": failing,
        "blocked": blocked,
        "missing": missing,
    }


def regression_declared(
    rule: RegressionRule, declared: bool, pairs: Sequence[int], baseline: str, candidate: str
) -> dict[str, Any]:
    """The rule the regression gate applied, as the summary records it."""
    return {
        "min_pairs": rule.min_pairs,
        "allow_reverse": rule.allow_reverse,
        "declared": declared,
        "statement": rule.describe(baseline, candidate),
        "demonstrable": len(pairs) >= rule.min_pairs,
    }
