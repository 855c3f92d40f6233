"""Per pair of arms and metric: each arm's median and the median of paired differences;
and how a duration spreads over trials, per arm and per paired difference (``spread``:
what the latency plot draws, a box per arm on a log scale, and its table states).

Only measured values enter; estimated values are counted and kept apart; missing values
are counted, never read as 0. Timeouts are censored (see ``_metric_values``): a median
that censoring reaches reads "> limit", and a paired difference with a censored member is
itself censored, with the direction the truth lies in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.analysis import (
    censored_median,
    censored_paired_differences,
    order_statistic_rank,
    paired_median_difference,
    paired_median_difference_censored,
)
from pairbench.report.summary._common import CONFIDENCE, ci95, median_or_none
from pairbench.report.summary._frame import Frame
from pairbench.report.summary._metric_values import METRICS, Values

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Rows = npt.NDArray[np.int64]

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


def _arm_median(values: Floats, censored: Bools, limit: float | None) -> dict[str, Any]:
    counts = {"n": len(values), "n_censored": int(censored.sum())}
    exact = {"censored": False, "relation": "=", "bound": None}
    if not censored.any():
        return {"estimate": median_or_none(values), **exact, **counts}
    if limit is None or bool((values[~censored] > limit).any()):
        return _bounded_median(values.tolist(), censored.tolist()) | counts
    # A duration censored at the trial timeout: the truth exceeds the limit.
    m = censored_median(values.tolist(), censored.tolist(), limit)
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


def _difference(xs: Floats, ys: Floats, ca: Bools, cb: Bools) -> dict[str, Any]:
    if not ca.any() and not cb.any():
        res = paired_median_difference(xs, ys, CONFIDENCE)
        return {
            "estimate": res.estimate,
            "ci95": ci95(res.low, res.high),
            "censored": False,
            "n": res.n_used,
            "method": res.method,
        }
    lists = (xs.tolist(), ys.tolist(), ca.tolist(), cb.tolist())
    diffs = censored_paired_differences(*lists)
    res_c = paired_median_difference_censored(*lists)
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


def _metric(name: str, values: Values, a: Rows, b: Rows, limit: float | None) -> dict[str, Any]:
    estimated = values.estimated[a] | values.estimated[b]
    va, vb = values.value[a], values.value[b]
    missing = ~estimated & (np.isnan(va) | np.isnan(vb))
    used = ~estimated & ~missing
    info = METRICS[name]
    out: dict[str, Any] = {
        "label": info.label,
        "unit": info.unit,
        "pairs": len(a),
        "n_used": int(used.sum()),
        "n_missing": int(missing.sum()),
        "n_estimated": int(estimated.sum()),
    }
    xs, ys = va[used], vb[used]
    ca, cb = values.censored[a][used], values.censored[b][used]
    limit_here = limit if info.timed else None
    out["median_a"] = _arm_median(xs, ca, limit_here)
    out["median_b"] = _arm_median(ys, cb, limit_here)
    if len(xs):
        out["median_paired_difference"] = _difference(xs, ys, ca, cb)
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
    values: Mapping[str, Values], a: Rows, b: Rows, limit: float | None
) -> dict[str, Any]:
    """Every metric of ``METRICS`` over paired rows: ``a[i]`` and ``b[i]`` are one trial.

    ``values`` holds each metric over every row of the table (``metric_values``).
    """
    return {name: _metric(name, values[name], a, b, limit) for name in METRICS}


QUANTILES = (0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0)
"""The points each spread states: min, 5th, quartiles, median, 95th, max."""


def _points(values: npt.NDArray[np.float64]) -> dict[str, Any]:
    if not len(values):
        return {"n": 0, "quantiles": None}
    # Linear interpolation (numpy's default, R's type 7): the convention box plots use.
    qs = np.quantile(values, QUANTILES)
    return {"n": len(values), "quantiles": [float(q) for q in qs]}


def spread(
    frame: Frame, values: Values, metric: str, pairs: Iterable[tuple[int, int]]
) -> dict[str, Any]:
    """Quantiles of ``metric`` over each arm's scored final trials (measured, uncensored
    values only) and over each pair's paired differences (a minus b, trials both measured).

    Censored values (timeouts) are left out and counted, so a spread never passes a lower
    bound off as a measurement.
    """
    rows = frame.scored
    measured = ~np.isnan(values.value[rows]) & ~values.censored[rows]
    arms = []
    for i, arm in enumerate(frame.arms):
        mine = frame.arm[rows] == i
        censored = int((mine & values.censored[rows]).sum())
        arms.append(
            {"arm": arm, "censored": censored, **_points(values.value[rows[mine & measured]])}
        )
    diffs = []
    both = rows[measured]
    for a, b in pairs:
        in_a, in_b = frame.paired(frame.of_arm(both, a), frame.of_arm(both, b))
        d = values.value[in_a] - values.value[in_b]
        diffs.append({"a": frame.arms[a], "b": frame.arms[b], **_points(d)})
    return {"metric": metric, "unit": "ms", "arms": arms, "pairs": diffs}
