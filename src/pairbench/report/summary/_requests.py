"""The ``model_requests`` section of the summary: per arm, what each model request cost and
how fast the server was, from the trial table's ``requests`` (see ``_schema_arms``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.report.summary._frame import Frame
from pairbench.store._table import REQUEST_NUMBERS


def _spread(values: npt.NDArray[np.float64]) -> dict[str, Any]:
    values = values[~np.isnan(values)]
    if not len(values):
        return {"n": 0, "median": None, "p10": None, "p90": None}
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return {"n": len(values), "median": float(median), "p10": float(p10), "p90": float(p90)}


def model_requests(frame: Frame) -> list[dict[str, Any]]:
    """Per arm in declared order; empty when no record of the run has model requests."""
    req = frame.table.requests
    if not len(req["row"]):
        return []
    ran = frame.final[~frame.mask("not_run")[frame.final]]
    out = []
    for i, arm in enumerate(frame.arms):
        rows = frame.of_arm(ran, i)
        mine = np.isin(req["row"], rows)
        out.append(
            {
                "arm": arm,
                "trials": len(rows),
                "trials_with_requests": len(np.unique(req["row"][mine])),
                "requests": int(mine.sum()),
                "failed": int((~req["ok"][mine]).sum()),
                **{q: _spread(req[q][mine]) for q in REQUEST_NUMBERS},
            }
        )
    return out
