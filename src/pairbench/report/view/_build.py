"""Build the report view from a summary: which sections, tables and sentences it shows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pairbench.report.summary._common import OUTCOME_ORDER
from pairbench.report.view import _format as f
from pairbench.report.view import _hypotheses as vh
from pairbench.report.view import _metrics as vm
from pairbench.report.view import _ops as ops
from pairbench.report.view import _pairs as vp
from pairbench.report.view import _primary as vprimary
from pairbench.report.view import _provenance as vprov
from pairbench.report.view import _study as vs
from pairbench.report.view._doc import Block, Figure, Omitted, Section, Table, View
from pairbench.store._records import LIMIT_OUTCOMES
from pairbench.studies import StudyReport, load_study

NO_RUNS = "No runs recorded."
SIMULATED = "SIMULATED run: the agent was simulated; these numbers test the harness, not a model."
PLOTS_NOT_DRAWN = (
    "not drawn in this report: `pairbench run` and `pairbench resume` leave them out, so the "
    "run's time goes to its trials (their numbers are in the tables below). Draw them into "
    "report.html with `pairbench report` on this run's folder ({run_id}); `pairbench view` "
    "always shows them"
)
"""The meta line of a report written without its plots."""
OUTCOME_HEADERS = tuple(
    {"infra": "infra (attempts kept)", "not_run": "not_run (misses)"}.get(o, o)
    for o in OUTCOME_ORDER
)
"""Column headers of the outcome counts: the summary's keys, in its order (``outcomes``)."""


def _outcomes(s: Mapping[str, Any]) -> Section:
    conf = s["confidence"]
    # A limit column appears only when some arm reached that limit: most runs never do.
    shown = [
        i
        for i, name in enumerate(OUTCOME_HEADERS)
        if name not in LIMIT_OUTCOMES or any(a["outcomes"].get(name) for a in s["arms"])
    ]
    counts = Table(
        ["Arm", *(OUTCOME_HEADERS[i] for i in shown)],
        [
            [a["arm"], *(str(v) for i, v in enumerate(a["outcomes"].values()) if i in shown)]
            for a in s["arms"]
        ],
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
        "Scored outcomes: passed, failed, parse_failure, agent_error, timeout and a limit "
        "reached (output_limit, memory_limit, disk_limit, process_limit). not_run trials "
        "are misses, counted apart; infra and interrupted attempts are not scored. "
        f"Intervals are {conf:.0%} Wilson score intervals."
    )
    return Section("Outcomes by arm", [counts, rates, note])


def _tasks(s: Mapping[str, Any]) -> Section:
    return Section("Success by task", [vs.by_arm_table(s, "Task", s["tasks"], lambda r: r["task"])])


def _tiers(s: Mapping[str, Any]) -> Section:
    if not s["tiers"]:
        return Section("Success by tier", ["No task has a tier label."])
    tier = vs.by_arm_table(
        s, "Tier", s["tiers"], lambda r: "(no tier)" if r["tier"] is None else str(r["tier"])
    )
    return Section("Success by tier", [tier])


def _crossover(s: Mapping[str, Any]) -> Section:
    arms, cross = s["run"]["arms"], s["crossover"]
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
        vs.by_arm_table(s, "Position", cross["by_start_order"], lambda r: str(r["position"]))
    )
    return Section("Crossover and order", blocks)


Builder = Callable[[Mapping[str, Any]], Section | None]
"""A section's builder: the section from a summary, or None when it has nothing to show."""
SECTIONS: dict[str, Builder] = {
    "primary": vprimary.primary,
    "arms": vprov.arms,
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
    "model-requests": ops.model_requests,
    "security": ops.security,
    "cost": ops.cost,
    "usage": ops.usage,
    "seeding": vprov.seeding,
    "fields": vs.fields,
    "failures": vs.failures,
    "attention": ops.attention,
}
"""The core's sections, by the name ``report.sections`` uses, in report order
(``spec.CORE_SECTIONS``). The named study's own come after ``arms``."""
STUDY_AFTER = "arms"
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


def all_sections(s: Mapping[str, Any]) -> dict[str, Builder]:
    """Every section this summary's report can show, in report order: the core's, with the
    named study's own after ``arms``."""
    report = study_report(s)
    own = {} if report is None else {x.name: x.build for x in report.sections}
    out: dict[str, Builder] = {}
    for name, build in SECTIONS.items():
        out[name] = build
        if name == STUDY_AFTER:
            out.update(own)
    return out


def study_report(s: Mapping[str, Any]) -> StudyReport | None:
    """The named study's report part (sections and plots); None when it adds none here."""
    slot = s.get("study")
    if not slot or slot.get("missing"):
        return None
    return load_study(slot["name"]).report


def _chosen(s: Mapping[str, Any], sections: Mapping[str, object]) -> list[str]:
    declared = s["run"]["experiment"].get("sections")
    if declared is not None:
        return [name for name in sections if name in declared]
    return [name for name in sections if name not in SECTIONS or vs.applies(name, s)]


def _missing_study(s: Mapping[str, Any]) -> Section | None:
    """The word a reader needs when the named study's part could not be built."""
    slot = s.get("study")
    if not slot or not slot.get("missing"):
        return None
    declared = s["run"]["experiment"].get("sections") or []
    unknown = [name for name in declared if name not in SECTIONS]
    lost = f" Its sections ({', '.join(unknown)}) are missing." if unknown else ""
    fix = " Install the package that provides it and run `pairbench report` again."
    if slot.get("schema") is not None:  # the study ran its part: it said why not
        fix = ""
    return Section(
        f"Study {slot['name']}: not shown",
        [f"This run's experiment names the study {slot['name']}, but {slot['missing']}."
         f"{lost}{fix}"],
    )  # fmt: skip


def plot_homes(s: Mapping[str, Any]) -> dict[str, str]:
    """The section each plot sits in: the core's and the named study's plots."""
    report = study_report(s)
    return {**PLOT_HOME, **({} if report is None else {p.name: p.home for p in report.plots})}


def _with_figures(
    s: Mapping[str, Any],
    figures: Mapping[str, Figure | Omitted],
    chosen: list[str],
    built: dict[str, Section],
) -> list[Section]:
    homeless: list[Block] = []
    homes = plot_homes(s)  # loads the study's report part: once, not once a figure
    for plot, made in figures.items():
        block: Block = (
            f"Plot {plot!r} not drawn: {made.reason}." if isinstance(made, Omitted) else made
        )
        home = homes.get(plot, "")
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


def build_view(s: Mapping[str, Any], figures: Mapping[str, Figure | Omitted] | None) -> View:
    """The document both renderers draw from a summary, with the plots the render stage
    drew from it (``render._plots.build_figures``), each placed beside its table; ``None``
    when they were not drawn (a meta line says how to draw them)."""
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
    if run.get("protocol_version"):
        meta[0] = (meta[0][0], f"{meta[0][1]}, protocol version {run['protocol_version']}")
    meta += vprov.provenance_meta(run)
    changed = vprov.accepted_changes_row(run)
    if changed is not None:
        meta.insert(0, changed)  # the report leads with it
    title = f"pairbench report: {exp.get('id')} {exp.get('version')}"
    if run["simulated"]:
        title += " (SIMULATED)"
    if run.get("stage") == "screening":
        title += f" — {vprov.SCREENING_STAGE}"
    if changed is not None:
        title += " (CHANGED SINCE FREEZE)"
    imported = vprov.imported_section(run)
    if imported is not None:
        title += " (IMPORTED: RUN BY ANOTHER HARNESS)"
    if s["empty"]:
        return View(title, meta, run["simulated"], True, [imported] if imported else [])
    if figures is None:
        if exp.get("plots") != []:  # an experiment that declares no plot has none to draw
            meta.append(("Plots", PLOTS_NOT_DRAWN.format(run_id=run["run_id"])))
        figures = {}
    sections_ = all_sections(s)
    chosen = _chosen(s, sections_)
    built: dict[str, Section] = {}
    for name in chosen:
        section = sections_[name](s)
        if section is not None:
            blocks = vs.footnote_repeats(section.blocks) if name in FOOTNOTED else section.blocks
            built[name] = Section(section.title, blocks)
    # What pairbench can vouch for comes first, then a study that could not be shown, then
    # the protocol's limits.
    leading = [x for x in (imported, _missing_study(s), vs.limits(s)) if x is not None]
    sections = leading + _with_figures(s, figures, chosen, built)
    if s["manual_review"]:
        sections.append(vprov.manual_review(s))
    return View(title, meta, run["simulated"], False, sections)
