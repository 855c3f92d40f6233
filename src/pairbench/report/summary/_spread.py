"""How a duration spreads over trials, per arm and per paired difference: what the
latency plot draws (a box per arm on a log scale) and its table states."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.report.summary._frame import Frame
from pairbench.report.summary._metric_values import Values

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
