"""The short outcome table printed after a run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from pairbench.cli._app import out
from pairbench.store._records import LIMIT_OUTCOMES


def print_outcomes(arms: Sequence[Mapping[str, Any]]) -> None:
    """The summary's per-arm outcome counts (``summary.json`` ``arms``) as a table."""
    table = Table(title="Outcomes by arm")
    columns = ("arm", "passed", "scored", "failed", "agent_error", "timeout", "limit", "not_run")
    for column in columns:
        table.add_column(column, justify="right" if column != "arm" else "left")
    for entry in arms:
        counts, scored = entry["outcomes"], entry["scored"]
        table.add_row(
            str(entry["arm"]),
            str(counts["passed"]),
            str(scored),
            str(counts["failed"] + counts["parse_failure"]),
            str(counts["agent_error"]),
            str(counts["timeout"]),
            # Any declared limit reached (output, memory, disk, processes); the report splits it.
            str(sum(counts.get(kind, 0) for kind in LIMIT_OUTCOMES)),
            str(counts["not_run"]),
        )
    out.print(table)
