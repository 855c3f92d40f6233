"""Two arms' success on the same trials: the 2x2 table, Newcombe's interval, phi, McNemar, Holm."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.analysis import (
    cluster_bootstrap,
    holm,
    mcnemar_exact,
    paired_counts,
    paired_proportion_difference,
    phi_correlation,
)
from pairbench.report._common import CONFIDENCE, Key, ci95, proportion, sort_keys

NEWCOMBE = (
    "Newcombe (1998) method 10: score interval for a difference of paired proportions "
    "(each arm's Wilson interval, combined through the adjusted phi correlation)"
)
BOOTSTRAP_REPS = 10_000
TASK_CLUSTERED = (
    "task-clustered percentile bootstrap: whole tasks resampled with replacement (trials of "
    "one task are not independent), statistic = mean of per-pair differences (A passed − B "
    "passed); seeded from run.json's run_seed"
)
ONE_TASK = "not computed: all pairs are in one task, and resampling tasks needs at least two"


def _task_clustered(
    keys: Sequence[Key], a: Mapping[Key, bool], b: Mapping[Key, bool], seed: int
) -> dict[str, Any] | None:
    tasks = [k[0] for k in keys]
    if len(set(tasks)) == len(tasks):
        return None  # one trial per task: pairs are independent, Newcombe's interval stands
    out: dict[str, Any] = {"ci95": None, "method": ONE_TASK, "tasks": len(set(tasks))}
    out |= {"reps": BOOTSTRAP_REPS, "seed": seed}
    if len(set(tasks)) < 2:
        return out
    diffs = [float(a[k]) - float(b[k]) for k in keys]
    res = cluster_bootstrap(diffs, tasks, reps=BOOTSTRAP_REPS, seed=seed, confidence=CONFIDENCE)
    return out | {"ci95": ci95(res.low, res.high), "method": TASK_CLUSTERED}


def success_comparison(
    a: Mapping[Key, bool],
    b: Mapping[Key, bool],
    tasks: Sequence[str],
    *,
    declared: bool,
    seed: int,
) -> dict[str, Any]:
    """Paired success of arm A and arm B over the trials both scored.

    ``a`` and ``b`` map each scored trial (task, trial) to whether it passed. The exact
    McNemar p is computed for a declared comparison only; ``mcnemar_holm_p`` is filled in
    by `apply_holm` once every pair is known.
    """
    keys = sort_keys(a.keys() & b.keys(), tasks)
    counts = paired_counts([a[k] for k in keys], [b[k] for k in keys])
    n = counts.n
    difference: dict[str, Any] = {
        "estimate": None,
        "ci95": None,
        "method": NEWCOMBE,
        "task_clustered": None,
    }
    correlation = None
    if n:
        res = paired_proportion_difference(*counts, confidence=CONFIDENCE)
        difference |= {"estimate": res.difference, "ci95": ci95(res.low, res.high)}
        difference["task_clustered"] = _task_clustered(keys, a, b, seed)
        correlation = phi_correlation(*counts)
    return {
        "pairs": n,
        "unmatched_a": len(a) - n,
        "unmatched_b": len(b) - n,
        **counts._asdict(),
        "success_a": proportion(counts.both + counts.a_only, n),
        "success_b": proportion(counts.both + counts.b_only, n),
        "difference": difference,
        "correlation": correlation,
        "mcnemar_exact_p": mcnemar_exact(counts.a_only, counts.b_only) if declared else None,
        "mcnemar_holm_p": None,
    }


def apply_holm(comparisons: Sequence[dict[str, Any]]) -> None:
    """Fill ``mcnemar_holm_p`` of the declared comparisons (those with a p) with Holm's values.

    Holm over the declared comparisons only; with one declared comparison the adjusted
    value equals the raw one. Undeclared comparisons keep ``None``.
    """
    declared = [c for c in comparisons if c["mcnemar_exact_p"] is not None]
    for c, adjusted in zip(declared, holm([c["mcnemar_exact_p"] for c in declared]), strict=True):
        c["mcnemar_holm_p"] = adjusted
