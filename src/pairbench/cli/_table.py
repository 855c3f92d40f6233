"""The short outcome table printed after a run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from pairbench.cli._app import out


def print_outcomes(arms: Sequence[Mapping[str, Any]]) -> None:
    """The summary's per-arm outcome counts (``summary.json`` ``arms``) as a table."""
    table = Table(title="Outcomes by arm")
    for column in ("arm", "passed", "scored", "failed", "agent_error", "timeout", "not_run"):
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
            str(counts["not_run"]),
        )
    out.print(table)
