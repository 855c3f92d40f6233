"""The ``hypotheses`` section of the summary: each declared hypothesis over the trial table.

A pair is one task and trial that both arms scored, on a task the hypothesis's ``where``
counts. For a metric, only pairs whose two values were measured enter (estimated, missing
and censored values are counted apart, never read as 0 or as the bound); for a rate, only
pairs both arms were tested on. The statistics are ``pairbench.analysis``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from pairbench.analysis import (
    paired_counts,
    paired_equivalence,
    paired_mean_difference,
    paired_rate_equivalence,
)
from pairbench.analysis._newcombe import NEWCOMBE_METHOD
from pairbench.report.summary._common import CONFIDENCE
from pairbench.report.summary._frame import Frame
from pairbench.report.summary._invariance import invariance
from pairbench.report.summary._metric_values import METRICS, Values
from pairbench.spec._hypotheses import Hypothesis

Rows = npt.NDArray[np.int64]
NO_DROPS = {"censored": 0, "estimated": 0, "missing": 0, "not_tested": 0}


def _paired_rows(frame: Frame, h: Hypothesis, tasks: list[str]) -> tuple[Rows, Rows]:
    """Row indices of A and of B, aligned: one pair per (task, trial) both arms scored."""
    a, b = h.arms
    if a not in frame.arms or b not in frame.arms:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    counted = frame.scored[np.isin(frame.task[frame.scored], [frame.tasks.index(t) for t in tasks])]
    return frame.paired(
        frame.of_arm(counted, frame.arms.index(a)), frame.of_arm(counted, frame.arms.index(b))
    )


def _margin(h: Hypothesis, value: float | None) -> dict[str, Any] | None:
    spec = h.margin_spec()
    if spec is None or h.margin is None:
        return None
    return {"declared": h.margin, "relative": spec.relative, "value": value}


def _mean(h: Hypothesis, values: Values, a: Rows, b: Rows) -> dict[str, Any]:
    va, vb = values.value[a], values.value[b]
    censored = values.censored[a] | values.censored[b]
    estimated = (values.estimated[a] | values.estimated[b]) & ~censored
    used = ~np.isnan(va) & ~np.isnan(vb) & ~censored
    dropped = NO_DROPS | {
        "censored": int(censored.sum()),
        "estimated": int(estimated.sum()),
        "missing": int((~used & ~censored & ~estimated).sum()),
    }
    x, y = va[used], vb[used]
    out: dict[str, Any] = {"n": len(x), "dropped": dropped, "rate": None, "mean": None}
    spec = h.margin_spec()
    margin = None if spec is None or spec.relative else spec.value
    out["margin"] = _margin(h, margin)
    if len(x) < 2:
        some = "no pair has" if not len(x) else "only 1 pair has"
        reason = f"{some} both values measured, and a paired t needs at least 2"
        return out | {"verdict": "not computed", "reason": reason}
    if spec is not None and spec.relative:
        mean_b = float(y.mean())
        if not mean_b > 0:
            reason = f"the reference arm's mean is {mean_b:g}, so a relative margin has no scale"
            return out | {"verdict": "not computed", "reason": reason}
        margin = spec.value * mean_b
        out["margin"] = _margin(h, margin)
    tests: tuple[float | None, float | None, float | None] = (None, None, None)
    if margin is not None:
        eq = paired_equivalence(x, y, margin, CONFIDENCE)
        r, tests = eq.difference, (eq.tost_p, eq.p_lower, eq.p_upper)
        verdict = "equivalent" if eq.equivalent else "not shown equivalent"
    else:
        r = paired_mean_difference(x, y, CONFIDENCE)
        verdict = "differs" if r.low > 0 or r.high < 0 else "no difference shown"
    out["mean"] = {
        "n": r.n,
        "mean_a": r.mean_a,
        "mean_b": r.mean_b,
        "mean_difference": r.difference,
        "relative_difference": r.difference / r.mean_b if r.mean_b else None,
        "sd": r.sd,
        "se": r.se,
        "df": r.df,
        "ci95": [r.low, r.high],
        "p_value": r.p_value,
        "tost_p": tests[0],
        "p_lower": tests[1],
        "p_upper": tests[2],
    }
    return out | {"verdict": verdict, "reason": None}


def _rate(h: Hypothesis, frame: Frame, a: Rows, b: Rows) -> dict[str, Any]:
    injection = frame.table.columns["injection"]
    ta, tb = injection[a], injection[b]
    tested = (ta >= 0) & (tb >= 0)
    counts = paired_counts(ta[tested] == 1, tb[tested] == 1)
    n = counts.n
    spec = h.margin_spec()
    margin = spec.value if spec is not None else None
    rate: dict[str, Any] = {
        **counts._asdict(),
        "n": n,
        "rate_a": (counts.both + counts.a_only) / n if n else None,
        "rate_b": (counts.both + counts.b_only) / n if n else None,
        "difference": None,
        "ci95": None,
        "method": NEWCOMBE_METHOD,
        "mcnemar_exact_p": None,
    }
    out: dict[str, Any] = {
        "n": n,
        "dropped": NO_DROPS | {"not_tested": int((~tested).sum())},
        "margin": _margin(h, margin),
        "mean": None,
        "rate": rate,
    }
    if not n or margin is None:
        reason = "no pair had both arms tested by a probe"
        return out | {"verdict": "not computed", "reason": reason}
    r = paired_rate_equivalence(counts, margin, CONFIDENCE)
    rate |= {"difference": r.difference, "ci95": [r.low, r.high], "mcnemar_exact_p": r.mcnemar_p}
    verdict = "equivalent" if r.equivalent else "not shown equivalent"
    return out | {"verdict": verdict, "reason": None}


def _apart(h: Hypothesis, frame: Frame, labels: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Tasks carrying a label the filter names, with a value it does not count."""
    return [
        t
        for t in frame.tasks
        if not h.matches(labels.get(t, {})) and any(k in labels.get(t, {}) for k in h.where)
    ]


def judge(
    frame: Frame, values: Mapping[str, Values], h: Hypothesis, labels: Mapping[str, Any]
) -> dict[str, Any]:
    """One hypothesis over the frame (the ``HypothesisResult`` of ``_schema_hypotheses``)."""
    tasks = [t for t in frame.tasks if h.matches(labels.get(t, {}))]
    a, b = _paired_rows(frame, h, tasks)
    rated = h.kind == "rate-equivalence"
    head = {
        "id": h.id,
        "text": h.text,
        "kind": h.kind,
        "metric": h.metric,
        "unit": "proportion" if rated else METRICS[h.metric].unit,
        "a": h.arms[0],
        "b": h.arms[1],
        "where": h.describe_where(),
        "tasks": tasks,
        "reported_apart": _apart(h, frame, labels),
        "pairs": len(a),
    }
    body = _rate(h, frame, a, b) if rated else _mean(h, values[h.metric], a, b)
    exact = None
    if not rated and head["unit"] == "tokens":
        exact = invariance(frame, values[h.metric], a, b)
    missing = [arm for arm in h.arms if arm not in frame.arms]
    if missing:
        body |= {"verdict": "not computed", "reason": f"arm '{missing[0]}' has no records"}
    return head | body | {"invariance": exact}


def _unreadable(i: int, raw: Any, exc: ValidationError) -> dict[str, Any]:
    # run.json was validated when the run started; a declaration that no longer validates
    # was edited or written by another version. Its verdict says so rather than vanish.
    item = raw if isinstance(raw, dict) else {}
    given = item.get("arms")
    arms: list[Any] = given if isinstance(given, list) else []
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in error["loc"])
    return {
        "id": str(item.get("id", f"hypotheses[{i}]")),
        "text": str(item.get("text", "")),
        "kind": str(item.get("kind", "")),
        "metric": str(item.get("metric", "")),
        "unit": "",
        "a": str(arms[0]) if len(arms) > 0 else "",
        "b": str(arms[1]) if len(arms) > 1 else "",
        "where": "",
        "tasks": [],
        "reported_apart": [],
        "pairs": 0,
        "n": 0,
        "dropped": dict(NO_DROPS),
        **dict.fromkeys(("margin", "mean", "rate", "invariance")),
        "verdict": "not computed",
        "reason": f"run.json's declaration does not validate ({where}: {error['msg']})",
    }


def hypotheses(frame: Frame, values: Mapping[str, Values]) -> list[dict[str, Any]]:
    """Every hypothesis run.json's experiment declares, in declared order, judged."""
    raw = (frame.run.experiment_model or {}).get("hypotheses") or []
    labels = frame.labels()
    out = []
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        try:
            h = Hypothesis.model_validate(item)
        except ValidationError as exc:
            out.append(_unreadable(i, item, exc))
            continue
        out.append(judge(frame, values, h, labels))
    return out
