"""The ``primary`` part of ``summary.json``: each declared primary analysis, computed.

From the experiment's ``primary:`` (run.json ``experiment_model``; ``spec._primary``) and
each arm's scored trials with replacements: McNemar over the trials both arms scored, or
the sign flip over campaign pairs (a pair is a trial index; ``D_i`` sums A − B passes over
the tasks both scored in it). The statistics are ``analysis._primary``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import ValidationError

from pairbench.analysis import paired_counts
from pairbench.analysis._primary import ESTIMATES, campaign_primary, mcnemar_primary
from pairbench.report.summary._common import no_p_value
from pairbench.report.summary._frame import Frame
from pairbench.report.summary._replacements import Passed
from pairbench.spec._primary import PrimaryAnalysis


def _differences(frame: Frame, passed: Passed, a: str, b: str) -> list[int]:
    pa, pb = passed[a], passed[b]
    _, ia, ib = np.intersect1d(pa.keys, pb.keys, assume_unique=True, return_indices=True)
    width = int(frame.trial.max(initial=0)) + 1
    pair = pa.keys[ia] % width
    diff = pa.passed[ia].astype(np.int64) - pb.passed[ib].astype(np.int64)
    return [int(diff[pair == i].sum()) for i in np.unique(pair)]


def _one(frame: Frame, passed: Passed, p: PrimaryAnalysis) -> dict[str, Any]:
    a, b = p.arms
    out: dict[str, Any] = {
        "a": a,
        "b": b,
        "test": p.test,
        "interval": p.shown_interval,
        "interval_agrees": p.agrees,
        "alpha": p.alpha,
        "sided": p.sided,
        "unit": "campaign pair" if p.test == "sign-flip" else "trial",
        "estimate_of": ESTIMATES[p.shown_interval],
        "counts": None,
        "differences": None,
    }
    if a not in passed or b not in passed:
        missing = a if a not in passed else b
        return out | _empty(p, f"arm {missing} is not in this run")
    if no_p_value(frame.run):
        return out | _empty(p, "a screening run: one stochastic pair, no test")
    if p.test == "sign-flip":
        d = _differences(frame, passed, a, b)
        out["differences"] = d
        r = campaign_primary(d, p.shown_interval, p.alpha, p.sided)
    else:
        pa, pb = passed[a], passed[b]
        _, ia, ib = np.intersect1d(pa.keys, pb.keys, assume_unique=True, return_indices=True)
        counts = paired_counts(pa.passed[ia], pb.passed[ib])
        out["counts"] = {"a_only": counts.a_only, "b_only": counts.b_only, "pairs": counts.n}
        r = mcnemar_primary(counts, p.test, p.shown_interval, p.alpha, p.sided)
    return out | r._asdict()


def _empty(p: PrimaryAnalysis, reason: str) -> dict[str, Any]:
    return {"n": 0, "p_value": None, "estimate": None, "low": None, "high": None,
            "confidence": 1.0 - p.alpha, "rejects": None, "reason": reason}  # fmt: skip


def primary(frame: Frame, passed: Passed) -> list[dict[str, Any]]:
    """Every primary analysis run.json's experiment declares, in declared order."""
    raw = (frame.run.experiment_model or {}).get("primary") or []
    out = []
    for item in raw if isinstance(raw, list) else []:
        try:
            p = PrimaryAnalysis.model_validate(item)
        except ValidationError:
            continue  # validated at the run's start; a since-edited run.json is verify's
        out.append(_one(frame, passed, p))
    return out
