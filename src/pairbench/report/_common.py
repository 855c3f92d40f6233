"""Shared pieces of the summary builder: ordering, indexing and JSON-ready proportions."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pairbench.analysis import median, wilson
from pairbench.schedule import derive_run_seed
from pairbench.store._records import SCORED_OUTCOMES, TrialResult

CONFIDENCE = 0.95
"""Every interval in the report is at this confidence (ARCHITECTURE.md, Analysis defaults)."""

NOT_DECLARED = "not declared: no test"
"""What a pair that the experiment did not declare shows instead of a test."""

Key = tuple[str, int]
"""A trial: (task, trial index). A pair is one Key across arms."""


def proportion(k: int, n: int) -> dict[str, Any]:
    """``k/n`` with its Wilson interval as a JSON object; all None but k and n when n == 0."""
    if n == 0:
        return {"k": 0, "n": 0, "estimate": None, "low": None, "high": None}
    return dict(wilson(k, n, CONFIDENCE)._asdict())


def median_or_none(values: Sequence[float]) -> float | None:
    """The median, or None for no values (never 0: a missing value is not a zero)."""
    return median(values) if values else None


def ordered_unique(first: Iterable[str], rest: Iterable[str]) -> list[str]:
    """Names in declared order, then any undeclared ones found in records, sorted."""
    out = list(dict.fromkeys(first))
    out += sorted({x for x in rest} - set(out))
    return out


def arm_order(run: Mapping[str, Any], records: Iterable[TrialResult]) -> list[str]:
    """Declared arms first (in declared order), then any arm that only appears in records."""
    return ordered_unique((str(a) for a in run.get("arms", [])), (r.arm for r in records))


def task_order(run: Mapping[str, Any], records: Iterable[TrialResult]) -> list[str]:
    """Declared tasks first (in declared order), then any task that only appears in records."""
    declared = (str(t["id"]) for t in run.get("tasks", []))
    return ordered_unique(declared, (r.task for r in records))


def latest(results: Sequence[TrialResult]) -> dict[tuple[str, str, int], TrialResult]:
    """One record per (arm, task, trial): the highest attempt, should a retry sit beside it."""
    out: dict[tuple[str, str, int], TrialResult] = {}
    for r in results:
        key = (r.arm, r.task, r.trial)
        if key not in out or r.attempt > out[key].attempt:
            out[key] = r
    return out


def scored_by_arm(
    by_key: Mapping[tuple[str, str, int], TrialResult], arms: Sequence[str]
) -> dict[str, dict[Key, TrialResult]]:
    """Per arm, its scored trials keyed by (task, trial)."""
    out: dict[str, dict[Key, TrialResult]] = {arm: {} for arm in arms}
    for (arm, task, trial), r in by_key.items():
        if r.outcome in SCORED_OUTCOMES:
            out.setdefault(arm, {})[(task, trial)] = r
    return out


def sort_keys(keys: Iterable[Key], tasks: Sequence[str]) -> list[Key]:
    """Trials in declared task order, then trial index."""
    rank = {t: i for i, t in enumerate(tasks)}
    return sorted(keys, key=lambda k: (rank.get(k[0], len(rank)), k[0], k[1]))


def ci95(low: float | None, high: float | None) -> list[float] | None:
    """An interval as the ``[low, high]`` list the summary stores; None when either end is."""
    return None if low is None or high is None else [low, high]


def run_seed(run: Mapping[str, Any]) -> int:
    """run.json's ``run_seed``; for a run.json without one, the runner's default from the run ID."""
    seed = run.get("run_seed")
    return int(seed) if seed is not None else derive_run_seed(str(run.get("run_id")))


def bootstrap_seed(run: Mapping[str, Any], *parts: str) -> int:
    """The seed of one bootstrap in the report, derived from the run seed.

    The first 8 bytes (big-endian) of ``sha256("pairbench.report|<run_seed>|<part>|...")``,
    for example parts ``(arm_a, arm_b, "success", "with_replacements")``: the same run
    always reports the same interval, and no two bootstraps share a stream.
    """
    text = "|".join(["pairbench.report", str(run_seed(run)), *parts])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def timeout_ms(run: Mapping[str, Any]) -> float | None:
    """The trial timeout in ms from run.json ``policies.budget.trial_timeout_s``; None if absent."""
    budget = (run.get("policies") or {}).get("budget") or {}
    value = budget.get("trial_timeout_s")
    return None if value is None else 1000.0 * float(value)
