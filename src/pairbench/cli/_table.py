"""The short outcome table printed after a run."""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.table import Table

from pairbench.cli._app import out
from pairbench.store._records import SCORED_OUTCOMES, TrialResult


def print_outcomes(results: list[TrialResult]) -> None:
    by_arm: dict[str, Counter[str]] = defaultdict(Counter)
    for result in results:
        by_arm[result.arm][result.outcome] += 1
    table = Table(title="Outcomes by arm")
    for column in ("arm", "passed", "scored", "failed", "agent_error", "timeout", "not_run"):
        table.add_column(column, justify="right" if column != "arm" else "left")
    for arm, counts in by_arm.items():
        scored = sum(counts[o] for o in SCORED_OUTCOMES)
        table.add_row(
            arm,
            str(counts["passed"]),
            str(scored),
            str(counts["failed"] + counts["parse_failure"]),
            str(counts["agent_error"]),
            str(counts["timeout"]),
            str(counts["not_run"]),
        )
    out.print(table)
