"""Build the report view from a summary: which sections, tables and sentences it shows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report import _format as f
from pairbench.report import _view_hypotheses as vh
from pairbench.report import _view_metrics as vm
from pairbench.report import _view_ops as ops
from pairbench.report import _view_pairs as vp
from pairbench.report._doc import Section, Table, View

NO_RUNS = "No runs recorded."
SIMULATED = "SIMULATED run: the agent was simulated; these numbers test the harness, not a model."
OUTCOME_HEADERS = (
    "passed",
    "failed",
    "parse_failure",
    "agent_error",
    "timeout",
    "infra (attempts kept)",
    "not_run (misses)",
    "interrupted",
)


def _per_arm(arms: list[str], cells: Mapping[str, Any], fmt: Any) -> list[str]:
    return [fmt(cells[a]) for a in arms]


def _outcomes(s: Mapping[str, Any]) -> Section:
    conf = s["confidence"]
    counts = Table(
        ["Arm", *OUTCOME_HEADERS],
        [[a["arm"], *(str(v) for v in a["outcomes"].values())] for a in s["arms"]],
    )
    rates = Table(
        [
            "Arm",
            "Success (passed / scored)",
            "Success, valid surface only",
            "Invalid trials",
            "Success counting not_run as miss",
        ],
        [
            [
                a["arm"],
                f.prop(a["success"], conf),
                f.prop(a["success_valid_surface"], conf),
                str(a["invalid_trials"])
                + (f" ({a['validity_unknown']} unknown)" if a["validity_unknown"] else ""),
                f.prop(a["success_not_run_as_miss"], conf),
            ]
            for a in s["arms"]
        ],
    )
    note = (
        "Scored outcomes: passed, failed, parse_failure, agent_error, timeout. not_run trials "
        "are misses, counted apart; infra and interrupted attempts are not scored. "
        f"Intervals are {conf:.0%} Wilson score intervals."
    )
    return Section("Outcomes by arm", [counts, rates, note])


def _by_arm_table(
    first: str, rows: list[Mapping[str, Any]], label: Any, arms: list[str], conf: float
) -> Table:
    return Table(
        [first, *arms],
        [[label(r), *_per_arm(arms, r["arms"], lambda p: f.prop(p, conf))] for r in rows],
    )


def _breakdowns(s: Mapping[str, Any]) -> list[Section]:
    arms, conf = s["run"]["arms"], s["confidence"]
    out = [
        Section(
            "Success by task", [_by_arm_table("Task", s["tasks"], lambda r: r["task"], arms, conf)]
        )
    ]
    if s["tiers"]:
        tier = _by_arm_table(
            "Tier",
            s["tiers"],
            lambda r: "(no tier)" if r["tier"] is None else str(r["tier"]),
            arms,
            conf,
        )
        out.append(Section("Success by tier", [tier]))
    cross = s["crossover"]
    blocks: list[str | Table] = []
    if cross["tasks_differing"]:
        blocks.append("Tasks whose pass count differs between arms (passed/scored):")
        blocks.append(
            Table(
                ["Task", *arms],
                [
                    [t["task"], *(f"{t['passed'][a]}/{t['scored'][a]}" for a in arms)]
                    for t in cross["tasks_differing"]
                ],
            )
        )
    else:
        blocks.append("No task's pass count differs between arms.")
    blocks.append("Success by planned position within the pair (0 = ran first):")
    blocks.append(
        _by_arm_table("Position", cross["by_start_order"], lambda r: str(r["position"]), arms, conf)
    )
    out.append(Section("Crossover and order", blocks))
    return out


def build_view(s: Mapping[str, Any]) -> View:
    """The document both renderers draw from a summary."""
    run, exp = s["run"], s["run"]["experiment"]
    meta = [
        ("Experiment", f"{exp.get('id')} version {exp.get('version')}"),
        ("Run", str(run["run_id"])),
        ("Status", str(run["status"])),
        ("Started", str(run["started_at"] or f.NA)),
        ("Ended", str(run["ended_at"] or f.NA)),
        (
            "Trials",
            f"{s['trials']} ran of {s['planned_trials']} planned; {s['not_run']} not run; "
            f"{s['kept_attempts']} attempts kept (infra or interrupted); "
            f"{s['replaced_attempts'] or 'no'} replaced attempts",
        ),
    ]
    if exp.get("description"):
        meta.insert(1, ("Description", str(exp["description"])))
    meta += ops.provenance_meta(run)
    title = f"pairbench report: {exp.get('id')} {exp.get('version')}"
    if run["simulated"]:
        title += " (SIMULATED)"
    if s["empty"]:
        return View(title, meta, run["simulated"], True, [])
    identities = ops.arms(s)
    sections = [
        *([identities] if identities else []),
        _outcomes(s),
        *vh.hypotheses(s),
        vp.success(s),
        vm.metrics(s, conditional=False),
        vm.metrics(s, conditional=True),
        vp.replacements(s),
        *_breakdowns(s),
        ops.transport(s),
        ops.security(s),
        ops.cost(s),
        ops.usage(s),
        ops.seeding(s),
        ops.attention(s),
    ]
    if s["manual_review"]:
        sections.append(ops.manual_review(s))
    return View(title, meta, run["simulated"], False, sections)
