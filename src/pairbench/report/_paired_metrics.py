"""Per pair of arms and metric: each arm's median and the median of paired differences.

Only measured values enter; estimated values are counted and kept apart; missing values
are counted, never read as 0. Timeouts are censored (see ``_metric_values``): a median
that censoring reaches reads "> limit", and a paired difference with a censored member is
itself censored, with the direction the truth lies in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.analysis import (
    censored_median,
    censored_paired_differences,
    median,
    order_statistic_rank,
    paired_median_difference,
    paired_median_difference_censored,
)
from pairbench.report._common import CONFIDENCE, Key, ci95
from pairbench.report._metric_values import METRICS, Value, metric_value
from pairbench.store._records import TrialResult

CENSORED_INTERVAL = (
    "median of paired differences (a - b) with the order-statistic interval (sign-test "
    "inversion) taken conservatively over censoring: its lower end with every censored "
    "difference as low as it could be, its upper end as high; null where unbounded"
)


def _bounded_median(values: Sequence[float], censored: Sequence[bool]) -> dict[str, Any]:
    # Without a common limit (tokens, cost, tool latency of a timed-out trial) each
    # censored value is only a lower bound of its own. The median is then at least the
    # median with every censored value as recorded, and at most the one with them at
    # +infinity: the censored paired difference against 0 gives exactly those two.
    zeros = [0.0] * len(values)
    r = paired_median_difference_censored(values, zeros, censored, [False] * len(values))
    if not r.could_move:
        return {"estimate": r.estimate, "censored": False, "relation": "=", "bound": None}
    return {"estimate": None, "censored": True, "relation": ">=", "bound": r.lower_bound}


def _arm_median(
    values: Sequence[float], censored: Sequence[bool], limit: float | None
) -> dict[str, Any]:
    counts = {"n": len(values), "n_censored": sum(censored)}
    exact = {"censored": False, "relation": "=", "bound": None}
    if not values:
        return {"estimate": None, **exact, **counts}
    if not any(censored):
        return {"estimate": median(values), **exact, **counts}
    completed = [v for v, c in zip(values, censored, strict=True) if not c]
    if limit is None or any(v > limit for v in completed):
        return _bounded_median(values, censored) | counts
    # A duration censored at the trial timeout: the truth exceeds the limit.
    m = censored_median(values, censored, limit)
    if m.reaches_median:
        return {"estimate": None, "censored": True, "relation": ">", "bound": limit, **counts}
    return {"estimate": m.median, **exact, **counts}


def _direction(r: Any) -> str:
    """Where censoring leaves the true median: words for `median_low` / `median_high`."""
    if not r.could_move:
        return "unaffected"
    if r.lower_bound is not None and r.upper_bound is not None:
        return "between"
    if r.lower_bound is not None:
        return "at least"
    if r.upper_bound is not None:
        return "at most"
    return "unbounded"


def _censored_interval(diffs: Sequence[Any]) -> list[float | None]:
    # The order-statistic interval's ends are monotone in every difference, so the lowest
    # lower end and the highest upper end over all values the censored differences could
    # take give an interval that covers whatever those values are.
    rank = order_statistic_rank(len(diffs), CONFIDENCE)
    if rank is None:
        return [None, None]
    r = rank[0]
    low = sorted(d.value if d.direction in ("=", ">=") else -math.inf for d in diffs)[r - 1]
    high = sorted(d.value if d.direction in ("=", "<=") else math.inf for d in diffs)[-r]
    return [low if math.isfinite(low) else None, high if math.isfinite(high) else None]


def _difference(a: Sequence[Value], b: Sequence[Value]) -> dict[str, Any]:
    xs, ys = [v.value or 0.0 for v in a], [v.value or 0.0 for v in b]
    ca, cb = [v.censored for v in a], [v.censored for v in b]
    if not any(ca) and not any(cb):
        res = paired_median_difference(xs, ys, CONFIDENCE)
        return {
            "estimate": res.estimate,
            "ci95": ci95(res.low, res.high),
            "censored": False,
            "n": res.n_used,
            "method": res.method,
        }
    diffs = censored_paired_differences(xs, ys, ca, cb)
    res_c = paired_median_difference_censored(xs, ys, ca, cb)
    return {
        "estimate": res_c.estimate,
        "ci95": _censored_interval(diffs),
        "censored": {
            "pairs": res_c.n_censored,
            "a_only": res_c.n_at_least,
            "b_only": res_c.n_at_most,
            "both": res_c.n_unknown,
            "median_could_move": res_c.could_move,
            "median_low": res_c.lower_bound,
            "median_high": res_c.upper_bound,
            "direction": _direction(res_c),
        },
        "n": res_c.n,
        "method": CENSORED_INTERVAL,
    }


def _metric(
    name: str,
    keys: Sequence[Key],
    a: Mapping[Key, TrialResult],
    b: Mapping[Key, TrialResult],
    limit: float | None,
) -> dict[str, Any]:
    used_a: list[Value] = []
    used_b: list[Value] = []
    missing = estimated = 0
    for k in keys:
        va, vb = metric_value(a[k], name, limit), metric_value(b[k], name, limit)
        if va.estimated or vb.estimated:
            estimated += 1
        elif va.value is None or vb.value is None:
            missing += 1
        else:
            used_a.append(va)
            used_b.append(vb)
    info = METRICS[name]
    out: dict[str, Any] = {
        "label": info.label,
        "unit": info.unit,
        "pairs": len(keys),
        "n_used": len(used_a),
        "n_missing": missing,
        "n_estimated": estimated,
    }
    limit_here = limit if info.timed else None
    for side, vals in (("median_a", used_a), ("median_b", used_b)):
        out[side] = _arm_median(
            [v.value or 0.0 for v in vals], [v.censored for v in vals], limit_here
        )
    if used_a:
        out["median_paired_difference"] = _difference(used_a, used_b)
    else:
        out["median_paired_difference"] = {
            "estimate": None,
            "ci95": None,
            "censored": False,
            "n": 0,
            "method": "no pair with a measured value in both arms",
        }
    return out


def metric_comparisons(
    keys: Sequence[Key],
    a: Mapping[Key, TrialResult],
    b: Mapping[Key, TrialResult],
    limit: float | None,
) -> dict[str, Any]:
    """Every metric of ``METRICS`` over the pairs ``keys`` (arm A's and B's records)."""
    return {name: _metric(name, keys, a, b, limit) for name in METRICS}
