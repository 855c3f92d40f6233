"""View sections of what a study declares: its limits, per-field accuracy, failure reasons,
and the choice of sections and plots (``report:`` in the experiment)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pairbench.report import _format as f
from pairbench.report._doc import Block, Section, Table


def limits(s: Mapping[str, Any]) -> Section | None:
    """The protocol's stated limits, one per line; None when it states none."""
    stated = s["run"]["experiment"].get("limits") or []
    if not stated:
        return None
    return Section("Limits of this protocol", [f"- {text}" for text in stated])


def fields(s: Mapping[str, Any]) -> Section:
    """Accuracy per scored field and arm, Wilson intervals."""
    arms, conf = s["run"]["arms"], s["confidence"]
    if not s["fields"]:
        return Section("Accuracy per field", ["No grader scored fields in this run."])
    table = Table(
        ["Field", *arms],
        [[x["field"], *(f.prop(x["arms"][a], conf) for a in arms)] for x in s["fields"]],
    )
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


def footnote_repeats(blocks: list[Block]) -> list[Block]:
    """Tables whose cells repeat one "not measured (reason)" get the reason once, below.

    Nine cells saying "not measured (the scripted agent has no model ...)" read as noise;
    each becomes "not measured [n]" and note [n] states the reason.
    """
    out: list[Block] = []
    for block in blocks:
        if not isinstance(block, Table):
            out.append(block)
            continue
        reasons: dict[str, int] = {}
        for row in block.rows:
            for cell in row:
                found = _NOT_MEASURED.match(cell)
                if found:
                    reasons[found.group(1)] = reasons.get(found.group(1), 0) + 1
        notes = {r: i + 1 for i, r in enumerate(r for r, n in reasons.items() if n > 1)}
        if not notes:
            out.append(block)
            continue

        rows = [[_footnoted(c, notes) for c in row] for row in block.rows]
        out.append(Table(block.headers, rows))
        out += [f"[{n}] not measured: {reason}." for reason, n in notes.items()]
    return out


def _footnoted(cell: str, notes: dict[str, int]) -> str:
    found = _NOT_MEASURED.match(cell)
    if found and found.group(1) in notes:
        return f"not measured [{notes[found.group(1)]}]"
    return cell


def split_wide(table: Table, keep: int, at: int) -> list[Table]:
    """A table of many columns as two: the first ``keep`` columns lead both, then the
    columns before ``at`` and from ``at`` on (so no cell wraps in a 1,400 px page)."""
    if len(table.headers) <= at:
        return [table]
    first = Table(table.headers[:at], [row[:at] for row in table.rows])
    second = Table(
        table.headers[:keep] + table.headers[at:],
        [row[:keep] + row[at:] for row in table.rows],
    )
    return [first, second]


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
    if name == "fields":
        return bool(s["fields"])
    if name == "tiers":
        return bool(s["tiers"])
    return True
