"""View sections of what a study declares: its limits, per-field accuracy, failure reasons,
and the choice of sections and plots (``report:`` in the experiment)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Block, Section, Table


def limits(s: Mapping[str, Any]) -> Section | None:
    """The protocol's stated limits, one per line; None when it states none."""
    stated = s["run"]["experiment"].get("limits") or []
    if not stated:
        return None
    return Section("Limits of this protocol", [f"- {text}" for text in stated])


def by_arm_table(
    s: Mapping[str, Any], first: str, rows: list[Mapping[str, Any]], label: Any
) -> Table:
    """One row per entry of ``rows``: its ``label``, then each arm's proportion (success,
    or a field's accuracy) with its interval."""
    arms = s["run"]["arms"]
    cells = [[label(r), *(f.prop(r["arms"][a], s["confidence"]) for a in arms)] for r in rows]
    return Table([first, *arms], cells)


def fields(s: Mapping[str, Any]) -> Section:
    """Accuracy per scored field and arm, Wilson intervals."""
    conf = s["confidence"]
    if not s["fields"]:
        return Section("Accuracy per field", ["No grader scored fields in this run."])
    table = by_arm_table(s, "Field", s["fields"], lambda x: x["field"])
    note = (
        "Correct / scored per field: a trial enters a field's denominator only when its grade "
        "scored that field; a parse failure scores no field (it is not a zero). "
        f"Intervals are {conf:.0%} Wilson score intervals."
    )
    return Section("Accuracy per field", [table, note])


def failures(s: Mapping[str, Any]) -> Section:
    """Every scored trial that did not pass, grouped by outcome and reason."""
    groups = s["failures"]
    if not groups:
        return Section("Why trials failed", ["No scored trial failed."])
    arms = s["run"]["arms"]
    rows = [
        [
            g["outcome"],
            g["reason"] or "(none given)",
            str(g["trials"]),
            *(str(g["arms"].get(a, 0)) for a in arms),
            ", ".join(f"{e['arm']}/{e['task']}/{e['trial']}" for e in g["examples"])
            + (" ..." if g["trials"] > len(g["examples"]) else ""),
        ]
        for g in groups
    ]
    total = sum(g["trials"] for g in groups)
    lead = f"{total} scored trial(s) did not pass, in {len(groups)} group(s) of outcome and reason."
    return Section(
        "Why trials failed",
        [lead, Table(["Outcome", "Reason", "Trials", *arms, "Trials (arm/task/trial)"], rows)],
    )


_NOT_MEASURED = re.compile(r"^not measured \((.+)\)$")
LONG_ASIDE = 16
"""A parenthesis in a cell at least this long (a source, an estimator, a reason) becomes a
numbered note below its table, so cells of numbers stay short."""


def footnote_repeats(blocks: list[Block]) -> list[Block]:
    """Tables whose cells carry long asides get each aside once, below, as a numbered note.

    Nine cells saying "not measured (the scripted agent has no model ...)" read as noise,
    and "21,490 over 11 trials (simulated agent (seeded))" in every column makes the table
    wider than the page: each aside becomes "[n]" and note [n] states it.
    """
    out: list[Block] = []
    for block in blocks:
        if not isinstance(block, Table):
            out.append(block)
            continue
        notes: dict[str, int] = {}
        rows = [[_footnoted(cell, notes) for cell in row] for row in block.rows]
        out.append(Table(block.headers, rows) if notes else block)
        out += [f"[{n}] {aside}." for aside, n in notes.items()]
    return out


def _footnoted(cell: str, notes: dict[str, int]) -> str:
    """The cell with each long top-level "(aside)" replaced by its note's number."""
    found = _NOT_MEASURED.match(cell)
    if found:
        key = f"not measured: {found.group(1)}"
        return f"not measured [{notes.setdefault(key, len(notes) + 1)}]"
    out, depth, start = [], 0, 0
    for i, ch in enumerate(cell):
        if ch == "(":
            if depth == 0:
                out.append(cell[start:i])
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                aside = cell[start + 1 : i]
                if len(aside) >= LONG_ASIDE:
                    out.append(f"[{notes.setdefault(aside, len(notes) + 1)}]")
                else:
                    out.append(f"({aside})")
                start = i + 1
    out.append(cell[start:])
    return "".join(out)


def split_wide(table: Table, keep: int, at: Sequence[int]) -> list[Table]:
    """A table of many columns as several: the first ``keep`` columns lead each, then the
    columns up to the first cut in ``at``, between cuts, and from the last on (so no table
    of numbers is wider than a 1,400 px page)."""
    cuts = [c for c in at if keep < c < len(table.headers)]
    if not cuts:
        return [table]
    bounds = list(zip([0, *cuts], [*cuts, len(table.headers)], strict=True))
    return [
        Table(
            (table.headers[:keep] if lo else []) + table.headers[lo:hi],
            [(row[:keep] if lo else []) + row[lo:hi] for row in table.rows],
        )
        for lo, hi in bounds
    ]


def applies(name: str, s: Mapping[str, Any]) -> bool:
    """Whether an undeclared section has something to say in this run."""
    if name == "transport":
        return any(
            t["connect_ms"]["n_trials"]
            or t["client_call_ms"]["n_calls"]
            or t["transport_failures"]
            or t.get("infra_transport_failures", 0)
            for t in s["transport"]
        )
    if name == "security":
        return any(x["injection_applicable"] or x["secret_in_output"]["n"] for x in s["security"])
    if name in ("fields", "tiers"):
        return bool(s[name])
    return True
