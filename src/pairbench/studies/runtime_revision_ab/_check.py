"""``pairbench check`` on an experiment naming the study (``Study.check``): which of the
protocol's metric rows its report will fill, which stay missing, and why, before any run."""

from __future__ import annotations

from typing import Any

from pairbench.studies.runtime_revision_ab._scenario import ADAPTERS as _ADAPTERS

_PROXY_ROWS = (
    "usage with coverage k/n, context per request, tool calls proposed and returned, "
    "first-token, generation and provider times, sampling and seeds"
)
_EVENT_ROWS = (
    "normalized, authorized, denied and executed operations, prohibited attempts, denials, "
    "recovery by error category, verifier evidence for a claim, process receipts"
)


def _scenario_lines(loaded: Any, folder: str) -> list[str]:
    """Each task's own scenario folder: there and readable, and locked by ``files:``."""
    from pairbench._errors import PairbenchError
    from pairbench.studies.runtime_revision_ab._scenario import load_scenario

    exp = loaded.experiment
    root = loaded.root / folder
    lines = []
    for task in exp.tasks:
        try:
            load_scenario(task.id, root)
        except PairbenchError as exc:
            lines.append(f"task {task.id}: NOT RUNNABLE: {exc}")
    locked = any((loaded.root / f).resolve() == root.resolve() for f in exp.files)
    if not locked:
        lines.append(
            f"scenarios {folder}: not in files:, so the lock does not cover them. Fix: "
            f"files: [{folder}]"
        )
    return lines


def study_rows(loaded: Any) -> list[str]:
    """Lines for ``pairbench check``: per arm, what its report rows will come from."""
    exp = loaded.experiment
    lines: list[str] = []
    folders = {exp.arm_agent(a).settings.get("scenarios") for a in exp.arms}
    for folder in sorted(f for f in folders if isinstance(f, str)):
        lines += _scenario_lines(loaded, folder)
    for arm in exp.arms:
        agent = exp.arm_agent(arm)
        if agent.adapter not in _ADAPTERS:
            lines.append(
                f"arm {arm}: adapter {agent.adapter!r} records no scenario evidence, so the "
                "study's sections (task success grid, protocol metrics, gates, audit) will be "
                "missing. Fix: agent: {adapter: rab-runtime, settings: {command: [...]}} with "
                "grader minirt-acceptance"
            )
            continue
        lines.append(
            f"arm {arm}: scope from snapshots, acceptance-based success, canaries, leaked "
            "processes and latency stages: filled"
        )
        if exp.proxy is None:
            lines.append(f"arm {arm}: no proxy:, so missing: {_PROXY_ROWS}")
        else:
            lines.append(f"arm {arm}: from the recording proxy: {_PROXY_ROWS}: filled")
        if agent.settings.get("events", True) is False:
            lines.append(f"arm {arm}: events: false, so missing: {_EVENT_ROWS}")
        else:
            lines.append(
                f"arm {arm}: from the runtime's event stream (EVENTS.md), if it writes "
                f'$PAIRBENCH_EVENTS: {_EVENT_ROWS}; else each says "missing: the runtime '
                'reports no events" (check a stream with `pairbench study runtime-revision-ab '
                "check-events FILE`)"
            )
    lines.append(_gate_line(exp))
    return lines


def _gate_line(exp: Any) -> str:
    """What the release gate will call a demonstrated regression and which notes it needs."""
    from pairbench.studies.runtime_revision_ab._regression import is_declared, parse_rule
    from pairbench.studies.runtime_revision_ab.report._gates import ALWAYS_REVIEWED

    raw = exp.agent.settings.get("regression")
    try:
        rule = parse_rule(raw).describe()
    except ValueError:  # the core's check names the bad declaration at its line
        rule = "not readable (see the problem above)"
    model = {"agent": {"settings": exp.agent.settings}}
    whose = "as declared" if is_declared(model) else "the protocol's default"
    labels = [str((t.labels or {}).get("scenario", t.id)) for t in exp.tasks]
    needed = [s for s in ALWAYS_REVIEWED if s in labels]
    notes = ", ".join(needed) if needed else "none of the always-reviewed scenarios"
    return (
        f"release gates: a demonstrated regression is: {rule} ({whose}); review notes "
        f"(manual_review.json) required for {notes} and each demonstrated regression, or the "
        "release is blocked"
    )
