"""Per-field accuracy and the reasons trials failed: the parts of a scored study's summary."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.report.summary._common import proportion
from pairbench.report.summary._frame import Frame
from pairbench.store._records import SCORED_OUTCOMES

FAILED_OUTCOMES = SCORED_OUTCOMES - {"passed"}
"""Scored outcomes that are not a pass: each such final trial has its reason listed."""
EXAMPLES = 10
"""Trials named per failure reason; the count covers them all."""


def _in_report_order(frame: Frame, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``rows`` by task, trial, then arm: independent of the order records were stored in."""
    return rows[np.lexsort((frame.arm[rows], frame.trial_keys(rows)))]


def field_accuracy(frame: Frame) -> list[dict[str, Any]]:
    """Per scored field (the grade's ``details.fields``), correct/scored per arm.

    The denominator is the arm's scored trials whose grade scored that field: a parse
    failure scores no field, so it is in no field's denominator (it is not a zero), and
    the field table says how many such trials there were beside it. Fields in first-seen
    order of the report's trial order.
    """
    cats, col = frame.table.categories["fields"], frame.table.columns["fields"]
    # Only trials whose grade scored fields are ordered: a run without fields sorts nothing.
    scored = frame.scored
    rows = _in_report_order(frame, scored[col[scored] >= 0])
    codes = col[rows].astype(np.int64)
    # Trials per (fields record, arm) counted with numpy, then each distinct record's
    # fields added once: a million scored trials are one pass, not a Python loop each.
    n_arms = max(len(frame.arms), 1)
    pairs = codes * n_arms + frame.arm[rows]
    per_code = np.bincount(pairs, minlength=len(cats) * n_arms).reshape(len(cats), n_arms)
    distinct, first = np.unique(codes, return_index=True)
    order: dict[str, None] = {}
    k: Counter[tuple[str, int]] = Counter()
    n: Counter[tuple[str, int]] = Counter()
    # Distinct records in the order the report's trials first show them: their fields
    # come first-seen, as a walk over every trial would find them.
    for code in distinct[np.argsort(first, kind="stable")].tolist():
        counts = per_code[code].tolist()
        for name, correct in json.loads(cats[code]).items():
            order.setdefault(name)
            for arm, count in enumerate(counts):
                if count:
                    n[name, arm] += count
                    if correct:
                        k[name, arm] += count
    return [
        {
            "field": name,
            "arms": {arm: proportion(k[name, i], n[name, i]) for i, arm in enumerate(frame.arms)},
        }
        for name in order
    ]


def failure_reasons(frame: Frame) -> list[dict[str, Any]]:
    """Every final trial that was scored and not passed, grouped by outcome and reason.

    Each group counts its trials per arm and names up to ``EXAMPLES`` of them (arm, task,
    trial, in report order); groups by falling count, then outcome and reason.
    """
    table = frame.table
    reasons, reason_col = table.categories["reason"], table.columns["reason"]
    rows = frame.final[frame.mask(*FAILED_OUTCOMES)[frame.final]]
    rows = _in_report_order(frame, rows)
    # Grouped with numpy: a million failed trials are one pass, not a Python loop each.
    # Reason codes are made canonical first (no reason and an empty reason read the same).
    names = ["", *reasons]
    canon: dict[str, int] = {}
    to_canon = np.array([canon.setdefault(r, i) for i, r in enumerate(names)])
    reason_of = to_canon[reason_col[rows].astype(np.int64) + 1]
    key = table.columns["outcome"][rows].astype(np.int64) * len(names) + reason_of
    _, first, inverse, sizes = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    # Each group's rows, still in report order (a stable sort by group keeps it).
    split = np.split(rows[np.argsort(inverse.ravel(), kind="stable")], np.cumsum(sizes)[:-1])
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for g in np.argsort(first).tolist():  # groups in the order their first trial comes
        members = split[g]
        outcome = frame.outcome[int(table.columns["outcome"][members[0]])]
        reason = names[int(reason_of[first[g]])]
        counts = np.bincount(frame.arm[members], minlength=len(frame.arms)).tolist()
        groups[outcome, reason] = {
            "outcome": outcome,
            "reason": reason,
            "trials": len(members),
            "arms": {frame.arms[i]: c for i, c in enumerate(counts) if c},  # declared order
            "examples": [
                {
                    "arm": frame.arms[int(frame.arm[row])],
                    "task": frame.tasks[int(frame.task[row])],
                    "trial": int(frame.trial[row]),
                }
                for row in members[:EXAMPLES].tolist()
            ],
        }
    return sorted(groups.values(), key=lambda g: (-g["trials"], g["outcome"], g["reason"]))
