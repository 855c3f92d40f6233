"""The exact, per-pair check beside a token hypothesis: did the two arms of each pair send the
same requests, get the same replies, and count the same tokens?

A token ``equivalence`` hypothesis (H1: token cost is transport-invariant) is judged by its
interval, which averages over pairs. A real model with a fixed seed on one slot makes a
sharper test possible: where both arms sent byte-identical request bodies (so every tool
result they read was identical) and received identical replies, their token counts must be
equal, pair by pair. Where they were not equal, the first request that differed says why:

- ``identical``: every request body and reply matched, and so did the metric;
- ``violated``: every request body and reply matched, yet the metric differs (the count
  itself is not invariant: the finding H1 is about);
- ``body``: request *k*'s body differed (the inputs diverged: a tool result or an error
  text differed), so the pair cannot test invariance; the report names *k*;
- ``reply``: request *k* had the same body in both arms and got different replies (the
  server did not reproduce its sampling: seed, slot or cache);
- ``count``: one arm made more requests, all shared ones identical;
- ``not_recorded``: an arm recorded no request digests (a scripted or CLI agent), so
  nothing can be compared.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from pairbench.report.summary._frame import Frame
from pairbench.report.summary._metric_values import Values

Status = Literal["identical", "violated", "body", "reply", "count", "not_recorded"]
Rows = npt.NDArray[np.int64]


def _digests(frame: Frame, row: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """One row's request and reply digests, in request order (0: not recorded)."""
    req = frame.table.requests
    lo, hi = np.searchsorted(req["row"], [row, row + 1])
    return req["body"][lo:hi], req["reply"][lo:hi]


def _compare(frame: Frame, ra: int, rb: int) -> tuple[Status, int | None]:
    """How one pair's requests compare, and the 1-based request where they first differ."""
    body_a, reply_a = _digests(frame, ra)
    body_b, reply_b = _digests(frame, rb)
    if not len(body_a) or not len(body_b) or not (body_a.all() and body_b.all()):
        return "not_recorded", None
    for k in range(min(len(body_a), len(body_b))):
        if body_a[k] != body_b[k]:
            return "body", k + 1
        if reply_a[k] != reply_b[k]:
            return "reply", k + 1
    if len(body_a) != len(body_b):
        return "count", min(len(body_a), len(body_b)) + 1
    return "identical", None


def _value(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def invariance(frame: Frame, values: Values, a: Rows, b: Rows) -> dict[str, Any]:
    """The ``Invariance`` of ``_schema_hypotheses`` over aligned pair rows ``a`` and ``b``."""
    counts = dict.fromkeys(("identical", "violated", "body", "reply", "count", "not_recorded"), 0)
    listed = []
    equal = 0
    for ra, rb in zip(a.tolist(), b.tolist(), strict=True):
        va, vb = _value(values.value[ra]), _value(values.value[rb])
        status, k = _compare(frame, ra, rb)
        same = va is not None and va == vb
        if status == "identical" and not same:
            status = "violated"
        counts[status] += 1
        equal += same
        if status not in ("identical", "not_recorded"):
            listed.append(
                {
                    "task": frame.tasks[frame.task[ra]],
                    "trial": int(frame.trial[ra]),
                    "status": status,
                    "request": k,
                    "value_a": va,
                    "value_b": vb,
                }
            )
    tested = counts["identical"] + counts["violated"]
    holds: bool | None = counts["violated"] == 0 if tested else None
    return {
        "pairs": len(a),
        "checked": len(a) - counts["not_recorded"],
        "equal_values": equal,
        **counts,
        "holds": holds,
        "divergences": listed,
    }
