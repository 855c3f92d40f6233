"""Per pair of arms: paired success (both ways: with and without replacements) and metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.report._common import NOT_DECLARED, Key, bootstrap_seed, sort_keys, timeout_ms
from pairbench.report._paired_metrics import metric_comparisons
from pairbench.report._paired_success import apply_holm, success_comparison
from pairbench.report._replacements import Passed
from pairbench.store._records import TrialResult

MCNEMAR = "exact McNemar (two-sided binomial test on discordant pairs), declared before the run"
CONDITIONAL = "pairs both arms passed"


def _declared(a: str, b: str, comparisons: Sequence[Sequence[str]]) -> bool:
    return any(list(c) in ([a, b], [b, a]) for c in comparisons)


def pair_summaries(
    run: Mapping[str, Any],
    arms: Sequence[str],
    tasks: Sequence[str],
    scored: Mapping[str, Mapping[Key, TrialResult]],
    passed_with: Passed,
    passed_without: Passed,
) -> list[dict[str, Any]]:
    """Every unordered pair of arms, in declared arm order (A is the earlier arm).

    ``scored`` holds each arm's scored final results; ``passed_with`` and
    ``passed_without`` their pass/fail with and without replaced attempts. Declared
    comparisons get an exact McNemar p, Holm-adjusted over the declared ones within each
    family (with, without); undeclared ones get none.
    """
    comparisons = run.get("comparisons", [])
    limit = timeout_ms(run)
    out: list[dict[str, Any]] = []
    for i, arm_a in enumerate(arms):
        for arm_b in arms[i + 1 :]:
            declared = _declared(arm_a, arm_b, comparisons)
            a, b = scored.get(arm_a, {}), scored.get(arm_b, {})
            keys = sort_keys(a.keys() & b.keys(), tasks)
            both_passed = [k for k in keys if a[k].outcome == b[k].outcome == "passed"]
            entry: dict[str, Any] = {
                "a": arm_a,
                "b": arm_b,
                "declared": declared,
                "test": MCNEMAR if declared else NOT_DECLARED,
            }
            entry |= success_comparison(
                passed_with.get(arm_a, {}),
                passed_with.get(arm_b, {}),
                tasks,
                declared=declared,
                seed=bootstrap_seed(run, arm_a, arm_b, "success", "with_replacements"),
            )
            entry["metrics"] = metric_comparisons(keys, a, b, limit)
            entry["conditional"] = {
                "conditional": CONDITIONAL,
                "pairs": len(both_passed),
                "metrics": metric_comparisons(both_passed, a, b, limit),
            }
            entry["without_replacements"] = success_comparison(
                passed_without.get(arm_a, {}),
                passed_without.get(arm_b, {}),
                tasks,
                declared=declared,
                seed=bootstrap_seed(run, arm_a, arm_b, "success", "without_replacements"),
            )
            out.append(entry)
    apply_holm(out)
    apply_holm([p["without_replacements"] for p in out])
    return out
