"""Per-field accuracy counted with numpy equals a walk over every scored trial, in the
report's trial order (fields first-seen, parse failures in no denominator)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from helpers.report_builders import make_planted, make_planted_run
from pairbench.report.summary._common import proportion
from pairbench.report.summary._frame import Frame, build_frame
from pairbench.report.summary._scores import _in_report_order, field_accuracy
from pairbench.store import TrialTable
from pairbench.store._records import Grade
from pairbench.store._run_record import RunRecord

NAMES = ["total", "tau2", "overall.estimate", "rows[0].id", "unit", "ci.low"]


def _walk_every_trial(frame: Frame) -> list[dict[str, Any]]:
    """The plain reference: one scored trial at a time, in report order."""
    cats, col = frame.table.categories["fields"], frame.table.columns["fields"]
    order: dict[str, None] = {}
    k: Counter[tuple[str, int]] = Counter()
    n: Counter[tuple[str, int]] = Counter()
    for row in _in_report_order(frame, frame.scored):
        code = int(col[row])
        if code < 0:
            continue
        arm = int(frame.arm[row])
        for name, correct in json.loads(cats[code]).items():
            order.setdefault(name)
            n[name, arm] += 1
            k[name, arm] += bool(correct)
    return [
        {
            "field": name,
            "arms": {arm: proportion(k[name, i], n[name, i]) for i, arm in enumerate(frame.arms)},
        }
        for name in order
    ]


@pytest.mark.parametrize("seed", range(12))
def test_the_counted_table_is_the_walked_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    results = make_planted(tasks=7, trials=5, seed=seed)
    for i, result in enumerate(results):
        if rng.random() < 0.2:  # a parse failure, say: no field scored
            grade = Grade(outcome="parse_failure")
        else:
            names = rng.choice(NAMES, size=int(rng.integers(1, len(NAMES) + 1)), replace=False)
            fields = [{"path": str(p), "correct": bool(rng.random() < 0.6)} for p in names]
            grade = Grade(outcome=result.outcome, details={"fields": fields})
        results[i] = result.model_copy(update={"grade": grade})
    # Stored in a shuffled order: the report's order is the table's, not the storage's.
    shuffled = [results[i] for i in rng.permutation(len(results))]
    frame = build_frame(
        RunRecord.model_validate(make_planted_run()), TrialTable.from_results(shuffled, [])
    )
    counted = field_accuracy(frame)
    assert counted == _walk_every_trial(frame)
    assert len(counted) > 1 and any(a["n"] for f in counted for a in f["arms"].values())


def test_a_run_with_no_scored_field_has_no_field_table() -> None:
    results = [
        r.model_copy(update={"grade": Grade(outcome="parse_failure")}) for r in make_planted()
    ]
    frame = build_frame(
        RunRecord.model_validate(make_planted_run()), TrialTable.from_results(results, [])
    )
    assert field_accuracy(frame) == [] == _walk_every_trial(frame)
