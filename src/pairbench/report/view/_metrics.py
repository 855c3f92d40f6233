"""View sections of paired metrics: over all assigned trials, and conditional on both passing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Block, Section, Table

DIGITS = {"ms": 1, "tokens": 0, "turns": 0, "USD": 4}
HEADERS = [
    "Pair (A vs B)",
    "Metric",
    "Pairs used",
    "Median A",
    "Median B",
    "Median of A − B (95% CI)",
    "Timed out (A / B)",
]
CENSORED_HEADERS = [
    "Pair (A vs B)",
    "Metric",
    "Differences at least as recorded",
    "At most as recorded",
    "Unknown",
    "Median of A − B",
]
EXPLAIN = (
    "Medians of measured values only: estimated values are counted and kept apart (see "
    "Cost), missing ones are counted, never read as 0. The median of paired differences "
    "has a distribution-free interval from order statistics (sign-test inversion). A timeout "
    "censors the trial: its duration is at least the trial timeout, its other values are "
    'lower bounds. A median that censoring reaches reads "> limit"; a paired difference '
    "with a censored member is itself censored, and the table of censored differences says "
    "which way the truth lies."
)


def _used(m: Mapping[str, Any]) -> str:
    extras = []
    if m["n_missing"]:
        extras.append(f"{m['n_missing']} missing")
    if m["n_estimated"]:
        extras.append(f"{m['n_estimated']} only estimated, kept apart")
    tail = f" ({'; '.join(extras)})" if extras else ""
    return f"{m['n_used']} of {m['pairs']}{tail}"


def _true_median(c: Mapping[str, Any], unit: str, digits: int) -> str:
    low, high = (
        None if x is None else f.signed(x, digits) for x in (c["median_low"], c["median_high"])
    )
    return {
        "unaffected": "median unaffected",
        "between": f"true median between {low} and {high} {unit}",
        "at least": f"true median at least {low} {unit}",
        "at most": f"true median at most {high} {unit}",
    }.get(c["direction"], "true median unbounded: censoring in both directions")


def _timed_out(m: Mapping[str, Any]) -> str:
    ma, mb = m["median_a"], m["median_b"]
    if not (ma["n_censored"] or mb["n_censored"]):
        return "none"
    return f"timed out in {ma['n_censored']} / {mb['n_censored']} of {m['n_used']}"


def _rows(
    s: Mapping[str, Any], conditional: bool
) -> tuple[list[list[str]], list[list[str]], list[str]]:
    rows: list[list[str]] = []
    censored: list[list[str]] = []
    labels: dict[str, bool] = {}  # label -> measured in some pair (insertion keeps order)
    for p in s["pairs"]:
        pair = f"{p['a']} vs {p['b']}"
        metrics = p["conditional"]["metrics"] if conditional else p["metrics"]
        for m in metrics.values():
            shown = bool(m["n_used"] or m["n_estimated"])
            labels[m["label"]] = labels.get(m["label"], False) or shown
            if not shown:
                continue
            unit, digits = m["unit"], DIGITS.get(m["unit"], 1)
            rows.append(
                [
                    pair,
                    m["label"],
                    _used(m),
                    f.censored_median(m["median_a"], unit, digits),
                    f.censored_median(m["median_b"], unit, digits),
                    f.median_difference(m["median_paired_difference"], unit, digits),
                    _timed_out(m),
                ]
            )
            if c := m["median_paired_difference"]["censored"]:
                cells = [str(c[k]) for k in ("a_only", "b_only", "both")]
                censored.append([pair, m["label"], *cells, _true_median(c, unit, digits)])
    return rows, censored, [label for label, measured in labels.items() if not measured]


def metrics(s: Mapping[str, Any], *, conditional: bool) -> Section:
    """Per pair and metric: medians and the median paired difference."""
    if conditional:
        title = "Arm pairs: latency, tokens, cost (conditional: pairs both arms passed)"
        lead = [
            "Conditional: only pairs in which both arms passed (the same tasks solved by "
            "both), so a difference here is not an effect of the arm on all trials. "
            + ", ".join(
                f"{p['a']} vs {p['b']}: {p['conditional']['pairs']} of {p['pairs']} pairs"
                for p in s["pairs"]
            )
            + "."
        ]
    else:
        title = "Arm pairs: latency, tokens, cost (all assigned trials)"
        lead = ["Over every pair in which both arms have a scored outcome. " + EXPLAIN]
    if not s["pairs"]:
        return Section(title, ["Fewer than two arms: no pairs."])
    rows, censored, unmeasured = _rows(s, conditional)
    blocks: list[Block] = [*lead]
    blocks.append(Table(HEADERS, rows) if rows else "No metric was measured in any pair.")
    if censored:
        blocks.append(Table(CENSORED_HEADERS, censored))
    if unmeasured:
        blocks.append(f"Not measured in any pair: {', '.join(unmeasured)}.")
    return Section(title, blocks)
