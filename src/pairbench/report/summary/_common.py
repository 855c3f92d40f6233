"""Shared pieces of the summary builder: ordering, indexing and JSON-ready proportions."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.analysis import median, wilson
from pairbench.schedule import derive_run_seed
from pairbench.store._records import LIMIT_OUTCOMES
from pairbench.store._run_record import RunRecord

OUTCOME_ORDER = (
    "passed", "failed", "parse_failure", "agent_error", "timeout", *LIMIT_OUTCOMES,
    "infra", "not_run", "interrupted",
)  # fmt: skip
"""The order of an arm's outcome counts (``summary.arms[].outcomes``) and of the report's
columns of them."""

CONFIDENCE = 0.95
"""Every interval in the report is at this confidence (ARCHITECTURE.md, Analysis defaults)."""

NOT_DECLARED = "not declared: no test"
"""What a pair that the experiment did not declare shows instead of a test."""

SCREENING = "screening: one campaign pair, no test"
"""What a declared pair shows instead of a test in a screening run: one stochastic pair
supports no superiority claim, so no p value is computed (the protocol's screening)."""


def no_p_value(run: RunRecord) -> bool:
    """Whether the run is a screening run, whose report carries no p value."""
    return run.stage == "screening"


def proportion(k: int, n: int) -> dict[str, Any]:
    """``k/n`` with its Wilson interval as a JSON object; all None but k and n when n == 0."""
    if n == 0:
        return {"k": 0, "n": 0, "estimate": None, "low": None, "high": None}
    return dict(wilson(k, n, CONFIDENCE)._asdict())


def median_or_none(values: Sequence[float] | npt.NDArray[np.float64]) -> float | None:
    """The median, or None for no values (never 0: a missing value is not a zero)."""
    return median(values) if len(values) else None


def ordered_unique(first: Iterable[str], rest: Iterable[str]) -> list[str]:
    """Names in declared order, then any undeclared ones found in records, sorted."""
    out = list(dict.fromkeys(first))
    out += sorted({x for x in rest} - set(out))
    return out


def ci95(low: float | None, high: float | None) -> list[float] | None:
    """An interval as the ``[low, high]`` list the summary stores; None when either end is."""
    return None if low is None or high is None else [low, high]


def bootstrap_seed(run: RunRecord, *parts: str) -> int:
    """The seed of one bootstrap in the report, derived from the run seed.

    The first 8 bytes (big-endian) of ``sha256("pairbench.report|<run_seed>|<part>|...")``,
    for example parts ``(arm_a, arm_b, "success", "with_replacements")``: the same run
    always reports the same interval, and no two bootstraps share a stream. ``<run_seed>`` is
    run.json's; for a run.json without one, the runner's default from the run ID.
    """
    seed = run.run_seed if run.run_seed is not None else derive_run_seed(run.run_id)
    text = "|".join(["pairbench.report", str(seed), *parts])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def timeout_ms(run: RunRecord) -> float | None:
    """The trial timeout in ms from run.json ``policies.budget.trial_timeout_s``; None if absent."""
    value = run.trial_timeout_s()
    return None if value is None else 1000.0 * value
