"""Per pair of arms: paired success (both ways: with and without replacements) and metrics.

Two arms' success on the same trials is the 2x2 table, Newcombe's interval, phi, McNemar
(declared comparisons only, Holm-adjusted) and, where a task has several pairs, a
task-clustered bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pairbench.analysis import (
    cluster_bootstrap,
    holm,
    mcnemar_exact,
    mcnemar_midp,
    paired_counts,
    paired_proportion_difference,
    phi_correlation,
)
from pairbench.report.summary._common import (
    CONFIDENCE,
    NOT_DECLARED,
    SCREENING,
    bootstrap_seed,
    ci95,
    no_p_value,
    proportion,
)
from pairbench.report.summary._frame import Frame
from pairbench.report.summary._metric_values import Values
from pairbench.report.summary._paired_metrics import metric_comparisons
from pairbench.report.summary._replacements import ArmPassed, Passed

MCNEMAR = "exact McNemar (two-sided binomial test on discordant pairs), declared before the run"
CONDITIONAL = "pairs both arms passed"
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
    clusters: np.ndarray[Any, Any],
    a: np.ndarray[Any, Any],
    b: np.ndarray[Any, Any],
    *,
    seed: int,
    reps: int,
) -> dict[str, Any] | None:
    tasks = len(np.unique(clusters))
    if tasks == len(clusters):
        return None  # one trial per task: pairs are independent, Newcombe's interval stands
    out: dict[str, Any] = {"ci95": None, "method": ONE_TASK, "tasks": tasks}
    out |= {"reps": reps, "seed": seed}
    if tasks < 2:
        return out
    diffs = a.astype(np.float64) - b.astype(np.float64)
    res = cluster_bootstrap(diffs, clusters, reps=reps, seed=seed, confidence=CONFIDENCE)
    return out | {"ci95": ci95(res.low, res.high), "method": TASK_CLUSTERED}


def success_comparison(
    a: ArmPassed,
    b: ArmPassed,
    task_sort: np.ndarray[Any, Any],
    *,
    declared: bool,
    seed: int,
    reps: int = BOOTSTRAP_REPS,
) -> dict[str, Any]:
    """Paired success of arm A and arm B over the trials both scored.

    ``a`` and ``b`` hold each arm's scored trials and whether they passed; ``task_sort``
    maps a task index to its rank among the task names sorted (the bootstrap's clusters
    are ordered by name). The exact McNemar p is computed for a declared comparison only;
    ``mcnemar_holm_p`` is filled in by `apply_holm` once every pair is known.
    """
    _, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
    pa, pb = a.passed[ia], b.passed[ib]
    counts = paired_counts(pa, pb)
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
        clusters = task_sort[a.task[ia]]
        difference["task_clustered"] = _task_clustered(clusters, pa, pb, seed=seed, reps=reps)
        correlation = phi_correlation(*counts)
    return {
        "pairs": n,
        "unmatched_a": len(a.keys) - n,
        "unmatched_b": len(b.keys) - n,
        **counts._asdict(),
        "success_a": proportion(counts.both + counts.a_only, n),
        "success_b": proportion(counts.both + counts.b_only, n),
        "difference": difference,
        "correlation": correlation,
        "mcnemar_exact_p": mcnemar_exact(counts.a_only, counts.b_only) if declared else None,
        "mcnemar_midp_p": mcnemar_midp(counts.a_only, counts.b_only) if declared else None,
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


def _declared(a: str, b: str, comparisons: Sequence[Sequence[str]]) -> bool:
    return any(list(c) in ([a, b], [b, a]) for c in comparisons)


def pair_summaries(
    frame: Frame,
    values: Mapping[str, Values],
    passed_with: Passed,
    passed_without: Passed,
    reps: int,
) -> list[dict[str, Any]]:
    """Every unordered pair of arms, in declared arm order (A is the earlier arm).

    ``values`` holds every metric over the table's rows; ``passed_with`` and
    ``passed_without`` each arm's pass/fail with and without replaced attempts. Declared
    comparisons get an exact McNemar p, Holm-adjusted over the declared ones within each
    family (with, without); undeclared ones get none, nor does any in a screening run.
    """
    run, arms = frame.run, frame.arms
    comparisons = run.comparisons
    task_sort = np.argsort(np.argsort(np.array(frame.tasks, dtype=object), kind="stable"))
    passed = frame.mask("passed")
    out: list[dict[str, Any]] = []
    for i, arm_a in enumerate(arms):
        rows_a = frame.of_arm(frame.scored, i)
        for j in range(i + 1, len(arms)):
            arm_b = arms[j]
            a, b = frame.paired(rows_a, frame.of_arm(frame.scored, j))
            both = passed[a] & passed[b]
            declared = _declared(arm_a, arm_b, comparisons)
            tested = declared and not no_p_value(run)
            entry: dict[str, Any] = {
                "a": arm_a,
                "b": arm_b,
                "declared": declared,
                "test": MCNEMAR if tested else SCREENING if declared else NOT_DECLARED,
            }
            entry |= success_comparison(
                passed_with[arm_a],
                passed_with[arm_b],
                task_sort,
                declared=tested,
                seed=bootstrap_seed(run, arm_a, arm_b, "success", "with_replacements"),
                reps=reps,
            )
            entry["metrics"] = metric_comparisons(values, a, b, frame.limit_ms)
            entry["conditional"] = {
                "conditional": CONDITIONAL,
                "pairs": int(both.sum()),
                "metrics": metric_comparisons(values, a[both], b[both], frame.limit_ms),
            }
            entry["without_replacements"] = success_comparison(
                passed_without[arm_a],
                passed_without[arm_b],
                task_sort,
                declared=tested,
                seed=bootstrap_seed(run, arm_a, arm_b, "success", "without_replacements"),
                reps=reps,
            )
            out.append(entry)
    apply_holm(out)
    apply_holm([p["without_replacements"] for p in out])
    return out
