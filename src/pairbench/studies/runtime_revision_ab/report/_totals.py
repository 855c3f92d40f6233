"""Token and latency totals per arm (all assigned cells, and apart the conditional subset)
and per-task paired differences of end-to-end time and measured tokens.

The conditional subset is the (scenario, pair) cells both arms passed: fewer tokens there
is not evidence of a whole-campaign improvement, and a candidate that solves more work may
rightly spend more in total, so both views are shown side by side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pairbench.analysis import median, paired_median_difference_censored
from pairbench.studies.runtime_revision_ab.report._load import Cell

if TYPE_CHECKING:
    from pairbench.studies.runtime_revision_ab._evidence_models import ScenarioEvidence

Key = tuple[str, int]
"""(task, pair): one cell of the scenario grid."""

CONDITIONAL = "conditional subset, not evidence of whole-campaign improvement"


def measured_tokens(e: ScenarioEvidence) -> int | None:
    """Measured input + output tokens of an execution whose every request reported usage
    (0 for one that sent none: nothing is missing); None otherwise (a partial sum would
    understate it)."""
    u = e.usage
    if u.measured != u.requests:
        return None
    return (u.input_measured or 0) + (u.output_measured or 0)


def _total(cells: Sequence[Cell]) -> dict[str, Any]:
    ev = [c.evidence for c in cells if c.evidence is not None]
    inputs = [e.usage.input_measured for e in ev if e.usage.input_measured is not None]
    outputs = [e.usage.output_measured for e in ev if e.usage.output_measured is not None]
    return {
        "cells": len(cells),
        "with_evidence": len(ev),
        "requests": sum(e.usage.requests for e in ev),
        "measured_requests": sum(e.usage.measured for e in ev),
        "input_measured": sum(inputs) if inputs else None,
        "output_measured": sum(outputs) if outputs else None,
        "input_estimated": sum(e.usage.input_estimated for e in ev) if ev else None,
        "end_to_end_sum_ms": math.fsum(e.latency.end_to_end_ms for e in ev) if ev else None,
        "timed_out": sum(e.latency.timed_out for e in ev),
    }


def totals(
    arms: Sequence[str], by_cell: Mapping[tuple[str, str, int], Cell], both_passed: set[Key]
) -> list[dict[str, Any]]:
    """Per arm: totals over every cell, and over the cells both arms passed."""
    out = []
    for arm in arms:
        mine = [c for (a, t, p), c in by_cell.items() if a == arm]
        subset = [c for c in mine if (c.task, c.pair) in both_passed]
        out.append({"arm": arm, "all": _total(mine), "conditional": _total(subset)})
    return out


def _difference(pairs: Sequence[tuple[ScenarioEvidence, ScenarioEvidence]]) -> dict[str, Any]:
    """Candidate − baseline end-to-end time and measured tokens over paired executions."""
    base = [b.latency.end_to_end_ms for b, _ in pairs]
    cand = [c.latency.end_to_end_ms for _, c in pairs]
    flags_b = [b.latency.timed_out for b, _ in pairs]
    flags_c = [c.latency.timed_out for _, c in pairs]
    med = paired_median_difference_censored(cand, base, flags_c, flags_b)
    tokens = [(measured_tokens(b), measured_tokens(c)) for b, c in pairs]
    token_d = [float(c - b) for b, c in tokens if b is not None and c is not None]
    return {
        "pairs": len(pairs),
        "baseline_sum_ms": math.fsum(base) if pairs else None,
        "candidate_sum_ms": math.fsum(cand) if pairs else None,
        "sum_difference_ms": math.fsum(cand) - math.fsum(base) if pairs else None,
        "median_difference_ms": med.estimate,
        "median_low_ms": med.lower_bound,
        "median_high_ms": med.upper_bound,
        "censored": med.n_censored,
        "censoring_could_move": med.could_move,
        "token_pairs": len(token_d),
        "token_sum_difference": int(sum(token_d)) if token_d else None,
        "token_median_difference": median(token_d) if token_d else None,
    }


def paired_differences(
    tasks: Sequence[str],
    labels: Mapping[str, str],
    baseline: str,
    candidate: str,
    by_cell: Mapping[tuple[str, str, int], Cell],
    pairs: Sequence[int],
) -> dict[str, Any]:
    """Per task and over all tasks: the paired candidate − baseline differences."""
    rows, everything = [], []
    for task in tasks:
        matched = []
        for p in pairs:
            b, c = by_cell.get((baseline, task, p)), by_cell.get((candidate, task, p))
            if b is not None and c is not None and b.evidence and c.evidence:
                matched.append((b.evidence, c.evidence))
        everything += matched
        rows.append({"task": task, "scenario": labels[task], **_difference(matched)})
    return {"tasks": rows, "all": _difference(everything)}
