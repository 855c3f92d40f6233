"""Per pair of arms: paired success (both ways: with and without replacements) and metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pairbench.report.summary._common import (
    NOT_DECLARED,
    SCREENING,
    bootstrap_seed,
    no_p_value,
)
from pairbench.report.summary._frame import Frame
from pairbench.report.summary._metric_values import Values
from pairbench.report.summary._paired_metrics import metric_comparisons
from pairbench.report.summary._paired_success import apply_holm, success_comparison
from pairbench.report.summary._replacements import Passed

MCNEMAR = "exact McNemar (two-sided binomial test on discordant pairs), declared before the run"
CONDITIONAL = "pairs both arms passed"


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
