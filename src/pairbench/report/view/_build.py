"""Build the report view from a summary: which sections, tables and sentences it shows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pairbench.report.view import _attribution as vattr
from pairbench.report.view import _format as f
from pairbench.report.view import _hypotheses as vh
from pairbench.report.view import _metrics as vm
from pairbench.report.view import _ops as ops
from pairbench.report.view import _pairs as vp
from pairbench.report.view import _requests as vr
from pairbench.report.view import _revision as vrev
from pairbench.report.view import _revision_metrics as vrm
from pairbench.report.view import _study as vs
from pairbench.report.view._doc import Block, Figure, Omitted, Section, Table, View

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


def _tasks(s: Mapping[str, Any]) -> Section:
    arms, conf = s["run"]["arms"], s["confidence"]
    return Section(
        "Success by task", [_by_arm_table("Task", s["tasks"], lambda r: r["task"], arms, conf)]
    )


def _tiers(s: Mapping[str, Any]) -> Section:
    arms, conf = s["run"]["arms"], s["confidence"]
    if not s["tiers"]:
        return Section("Success by tier", ["No task has a tier label."])
    tier = _by_arm_table(
        "Tier",
        s["tiers"],
        lambda r: "(no tier)" if r["tier"] is None else str(r["tier"]),
        arms,
        conf,
    )
    return Section("Success by tier", [tier])


def _crossover(s: Mapping[str, Any]) -> Section:
    arms, conf = s["run"]["arms"], s["confidence"]
    cross = s["crossover"]
    blocks: list[Block] = []
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
    return Section("Crossover and order", blocks)


SECTIONS: dict[str, Callable[[Mapping[str, Any]], Section | None]] = {
    "attribution": vattr.attribution,
    "arms": ops.arms,
    "revision": vrev.revision,
    "revision-metrics": vrm.metrics,
    "revision-gates": vrev.gates,
    "revision-audit": vrev.audit,
    "outcomes": _outcomes,
    "hypotheses": lambda s: next(iter(vh.hypotheses(s)), None),
    "paired-success": vp.success,
    "metrics": lambda s: vm.metrics(s, conditional=False),
    "conditional-metrics": lambda s: vm.metrics(s, conditional=True),
    "replacements": vp.replacements,
    "tasks": _tasks,
    "tiers": _tiers,
    "crossover": _crossover,
    "transport": ops.transport,
    "model-requests": vr.model_requests,
    "security": ops.security,
    "cost": ops.cost,
    "usage": ops.usage,
    "seeding": ops.seeding,
    "fields": vs.fields,
    "failures": vs.failures,
    "attention": ops.attention,
}
"""Every section a report can show, by the name ``report.sections`` uses, in report order."""
PLOT_HOME = {
    "success": "outcomes",
    "task-heatmap": "tasks",
    "latency": "metrics",
    "transport": "transport",
    "tokens": "usage",
    "fields": "fields",
}
"""The section each plot sits in, beside the table of its numbers."""
FOOTNOTED = {"cost", "usage"}
"""Sections whose cells' long asides (sources, estimators, reasons) become notes below."""


def _chosen(s: Mapping[str, Any]) -> list[str]:
    declared = s["run"]["experiment"].get("sections")
    if declared is not None:
        return [name for name in SECTIONS if name in declared]
    return [name for name in SECTIONS if vs.applies(name, s)]


def _with_figures(
    figures: Mapping[str, Figure | Omitted], chosen: list[str], built: dict[str, Section]
) -> list[Section]:
    homeless: list[Block] = []
    for plot, made in figures.items():
        block: Block = (
            f"Plot {plot!r} not drawn: {made.reason}." if isinstance(made, Omitted) else made
        )
        home = PLOT_HOME[plot]
        if home in built:
            title, blocks = built[home]
            # The plot leads its section's table, the text alternative and numbers beside it.
            built[home] = Section(title, [block, *blocks])
        else:
            homeless.append(block)
    out = [built[name] for name in chosen if name in built]
    if homeless:
        out.append(Section("Plots", homeless))
    return out


def build_view(s: Mapping[str, Any], figures: Mapping[str, Figure | Omitted]) -> View:
    """The document both renderers draw from a summary, with the plots the render stage
    drew from it (``render._plots.build_figures``), each placed beside its table."""
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
    if run.get("stage") == "screening":
        title += f" — {ops.SCREENING_STAGE}"
    if s["empty"]:
        return View(title, meta, run["simulated"], True, [])
    chosen = _chosen(s)
    built: dict[str, Section] = {}
    for name in chosen:
        section = SECTIONS[name](s)
        if section is not None:
            blocks = vs.footnote_repeats(section.blocks) if name in FOOTNOTED else section.blocks
            built[name] = Section(section.title, blocks)
    sections = _with_figures(figures, chosen, built)
    stated = vs.limits(s)
    if stated is not None:
        sections.insert(0, stated)
    if s["manual_review"]:
        sections.append(ops.manual_review(s))
    return View(title, meta, run["simulated"], False, sections)
