"""The "Primary analysis" section: the declared deciding test per comparison, first in the
report, with the interval that agrees with it (or, declared, one that may not: said so)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Block, Section, Table

TESTS = {
    "sign-flip": "exact sign-flip test over every assignment of the pairs' signs",
    "mcnemar-exact": "exact McNemar (binomial test on the discordant trials)",
    "mcnemar-midp": "mid-p McNemar (binomial test on the discordant trials, mid-p)",
}
INTERVALS = {
    "sign-flip": "inverting the sign-flip test",
    "t": "one-sample t interval",
    "clopper-pearson": "Clopper-Pearson",
    "mid-p": "mid-p interval",
    "newcombe": "Newcombe method 10",
}
SIDED = {"two-sided": "two-sided", "greater": "one-sided, A > B", "less": "one-sided, A < B"}


def _end(x: float | None, test: str) -> str:
    if x is None:
        return "unbounded"
    return f"{x:+.3f}" if test == "sign-flip" else f"{x:.3f}"


def _row(p: Mapping[str, Any]) -> list[str]:
    if p["p_value"] is None:
        result = f"not computed: {p['reason']}"
        interval = "n/a"
    else:
        verdict = "rejects the null" if p["rejects"] else "does not reject the null"
        result = f"{f.p_value(p['p_value'])}: {verdict} at α = {p['alpha']:g}"
        interval = (
            f"{p['confidence']:.0%} {_end(p['low'], p['test'])} to {_end(p['high'], p['test'])}"
        )
    return [
        f"{p['a']} vs {p['b']}",
        f"{TESTS[p['test']]}, {SIDED[p['sided']]}",
        p["unit"],
        str(p["n"]),
        result,
        f"{interval} ({INTERVALS[p['interval']]})",
    ]


def _notes(p: Mapping[str, Any]) -> list[str]:
    name = f"{p['a']} vs {p['b']}"
    notes = [f"{name}: the interval is about the {p['estimate_of']}."]
    if p["estimate"] is not None:
        notes[0] += f" Estimate: {p['estimate']:+.3f}."
    if p["counts"] is not None:
        c = p["counts"]
        notes.append(
            f"{name}: {c['a_only']} trials only {p['a']} passed, {c['b_only']} only {p['b']}, "
            f"of {c['pairs']} both scored."
        )
    if p["differences"] is not None:
        d = ", ".join(f"{x:+d}" for x in p["differences"])
        notes.append(f"{name}: D_i per pair ({p['a']} − {p['b']} passes): {d}.")
    if not p["interval_agrees"]:
        notes.append(
            f"{name}: the declared interval ({INTERVALS[p['interval']]}) does not invert the "
            "test: the two can disagree, and the test decides."
        )
    return notes


def primary(s: Mapping[str, Any]) -> Section | None:
    """The section, or None when the experiment declares no primary analysis."""
    found = s.get("primary") or []
    if not found:
        return None
    blocks: list[Block] = [
        "Declared in the experiment before the run: for each comparison, the test that "
        "decides and its interval. Every other p value and interval in this report is "
        "secondary.",
        Table(
            ["Comparison", "Test (primary)", "Unit", "Pairs", "Result", "Interval"],
            [_row(p) for p in found],
        ),
    ]
    blocks += [n for p in found for n in _notes(p)]
    return Section("Primary analysis", blocks)
