"""What the run proves about itself: case set, lock, accepted harness change, seeding,
and manual review notes (shown beside the machine score, never changing it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.report._sections import Scored
from pairbench.store._records import TrialResult


def run_provenance(run: Mapping[str, Any]) -> dict[str, Any]:
    """The pre-registration facts from run.json (None where the run predates them)."""
    return {
        "case_set": run.get("case_set"),
        "campaign": run.get("campaign"),
        "lock_sha256": run.get("lock_sha256"),
        "lock_verified": run.get("lock_verified"),
        "accepted_harness_change": run.get("accepted_harness_change"),
    }


def seeding(arms: Sequence[str], scored: Scored) -> list[dict[str, Any]]:
    """Per arm: how many trials were provably seeded, unseeded, or had no model."""
    out = []
    for arm in arms:
        counts: Counter[str] = Counter(
            r.seeding.status if r.seeding else "not_recorded" for r in scored[arm].values()
        )
        reasons = Counter(
            r.seeding.reason for r in scored[arm].values() if r.seeding and r.seeding.reason
        )
        out.append(
            {
                "arm": arm,
                "seeded": counts["seeded"],
                "unseeded": counts["unseeded"],
                "not_applicable": counts["not_applicable"] + counts["not_recorded"],
                "reasons": dict(reasons.most_common(5)),
            }
        )
    return out


def manual_review(run: Mapping[str, Any], results: Sequence[TrialResult]) -> list[dict[str, Any]]:
    """Review notes from ``manual_review.json`` beside each trial's machine outcome."""
    machine = {(r.arm, r.task, r.trial): r.outcome for r in results}
    out = []
    for note in run.get("manual_review") or []:
        if not isinstance(note, Mapping):
            continue
        key = (str(note.get("arm")), str(note.get("task")), int(note.get("trial", -1)))
        out.append(
            {
                "arm": key[0],
                "task": key[1],
                "trial": key[2],
                "machine_outcome": machine.get(key),
                "verdict": str(note.get("verdict", "")),
                "note": str(note.get("note", "")),
                "reviewer": str(note.get("reviewer", "")),
            }
        )
    return out
