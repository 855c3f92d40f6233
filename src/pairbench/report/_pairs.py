"""Per pair of arms: matched 2x2 counts, success difference, latency differences, McNemar."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pairbench.analysis import mcnemar_exact, median, paired_counts, paired_median_difference
from pairbench.report._common import CONFIDENCE, Key, proportion, sort_keys
from pairbench.store._records import TrialResult

NOT_DECLARED = "not declared: no test"
MCNEMAR = "exact McNemar (two-sided binomial test on discordant pairs), declared before the run"


def wall_ms(r: TrialResult) -> float | None:
    """Measured wall time; None when missing (or only estimated: never mixed with measured)."""
    m = r.metrics.wall_ms if r.metrics else None
    if m is None or m.provenance != "measured" or m.value is None:
        return None
    return m.value


def tool_client_median_ms(r: TrialResult) -> float | None:
    """The trial's median client-side tool-call latency; None with no timed call."""
    if r.metrics is None:
        return None
    values = [c.client_ms for c in r.metrics.tool_calls if c.client_ms is not None]
    return median(values) if values else None


def _difference(
    keys: Sequence[Key],
    a: Mapping[Key, TrialResult],
    b: Mapping[Key, TrialResult],
    value: Callable[[TrialResult], float | None],
) -> dict[str, Any]:
    xs: list[float] = []
    ys: list[float] = []
    ca: list[bool] = []
    cb: list[bool] = []
    missing = 0
    for k in keys:
        x, y = value(a[k]), value(b[k])
        if x is None or y is None:
            missing += 1
            continue
        xs.append(x)
        ys.append(y)
        # A timeout stops the clock early: the true value is only a lower bound.
        ca.append(a[k].outcome == "timeout")
        cb.append(b[k].outcome == "timeout")
    res = paired_median_difference(xs, ys, CONFIDENCE, censored_a=ca, censored_b=cb)
    return {**res._asdict(), "n_missing": missing}


def _declared(a: str, b: str, comparisons: Sequence[Sequence[str]]) -> bool:
    return any(list(c) in ([a, b], [b, a]) for c in comparisons)


def pair_summaries(
    arms: Sequence[str],
    tasks: Sequence[str],
    scored: Mapping[str, Mapping[Key, TrialResult]],
    comparisons: Sequence[Sequence[str]],
) -> list[dict[str, Any]]:
    """Every unordered pair of arms, in declared arm order (A is the earlier arm)."""
    out: list[dict[str, Any]] = []
    for i, arm_a in enumerate(arms):
        for arm_b in arms[i + 1 :]:
            a, b = scored.get(arm_a, {}), scored.get(arm_b, {})
            keys = sort_keys(a.keys() & b.keys(), tasks)
            counts = paired_counts(
                [a[k].outcome == "passed" for k in keys], [b[k].outcome == "passed" for k in keys]
            )
            n = counts.n
            declared = _declared(arm_a, arm_b, comparisons)
            out.append(
                {
                    "a": arm_a,
                    "b": arm_b,
                    "declared": declared,
                    "matched": n,
                    "unmatched_a": len(a) - n,
                    "unmatched_b": len(b) - n,
                    "counts": dict(counts._asdict()),
                    "success_a": proportion(counts.both + counts.a_only, n),
                    "success_b": proportion(counts.both + counts.b_only, n),
                    "difference": (counts.a_only - counts.b_only) / n if n else None,
                    "test": MCNEMAR if declared else NOT_DECLARED,
                    "mcnemar_p": mcnemar_exact(counts.a_only, counts.b_only) if declared else None,
                    "wall_ms": _difference(keys, a, b, wall_ms),
                    "tool_client_ms": _difference(keys, a, b, tool_client_median_ms),
                }
            )
    return out
