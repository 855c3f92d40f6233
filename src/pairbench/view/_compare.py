"""The compare page: ``compare_runs`` over two runs, as rows a template shows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pairbench._errors import RunDirError
from pairbench.freeze._compare import TREATMENT_PATHS, compare_runs
from pairbench.view._paths import NotFound, RunsRoot

TREATMENTS = tuple(TREATMENT_PATHS)
"""What a comparison may let differ: ``arm``, ``source``, ``agent``, ``model``, ``tools``."""


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _proportion(value: Mapping[str, Any] | None) -> str:
    if not value:
        return "—"
    return f"{value['estimate']:.2f} [{value['low']:.2f}, {value['high']:.2f}]"


@dataclass(frozen=True)
class CompareQuery:
    """Which two runs, under which treatment (empty: the experiment's declared one)."""

    a: str = ""
    b: str = ""
    treatment: str = ""


@dataclass(frozen=True)
class ComparePage:
    """The verdict: why the comparison is invalid, or the runs' paired counts per arm."""

    query: CompareQuery
    treatment: str = ""
    valid: bool | None = None
    """None: no comparison asked for (or it could not be read)."""
    mismatches: list[tuple[str, str, str]] = field(default_factory=list)
    """Per identity that differs beyond the treatment: its path, A's value, B's value."""
    arms: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None


def parse_compare(query: Mapping[str, str], runs: list[str]) -> CompareQuery:
    """The runs and treatment a query names; ``NotFound`` for a run or treatment not here."""
    a, b = query.get("a", "").strip(), query.get("b", "").strip()
    treatment = query.get("treatment", "").strip()
    for name in (a, b):
        if name and name not in runs:
            raise NotFound(f"no run named {name!r}")
    if treatment and treatment not in TREATMENTS:
        raise NotFound(f"no treatment {treatment!r}: choose {', '.join(TREATMENTS)}")
    return CompareQuery(a, b, treatment)


def compare_page(root: RunsRoot, query: CompareQuery) -> ComparePage:
    """Compare the two runs of ``query`` (only when both are given)."""
    if not (query.a and query.b):
        return ComparePage(query)
    try:
        result = compare_runs(
            root.run_path(query.a), root.run_path(query.b), query.treatment or None
        )
    except RunDirError as exc:
        return ComparePage(query, error=str(exc))
    mismatches = [(m.path, _text(m.a), _text(m.b)) for m in result.mismatches]
    arms = [
        {
            "arm": str(row["arm"]),
            "pairs": str(row["pairs"]),
            "both": str(row["both"]),
            "a_only": str(row["a_only"]),
            "b_only": str(row["b_only"]),
            "neither": str(row["neither"]),
            "success_a": _proportion(row.get("success_a")),
            "success_b": _proportion(row.get("success_b")),
            "p": "n/a" if row.get("mcnemar_exact_p") is None else f"{row['mcnemar_exact_p']:.4f}",
        }
        for row in result.arms
    ]
    return ComparePage(query, result.treatment, result.valid, mismatches, arms)
