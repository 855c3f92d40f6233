"""``build_summary``: a run's records to the machine-readable summary (``summary.json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.report import _sections
from pairbench.report._common import (
    CONFIDENCE,
    arm_order,
    latest,
    proportion,
    scored_by_arm,
    task_order,
)
from pairbench.report._pairs import pair_summaries
from pairbench.report._provenance import manual_review, run_provenance, seeding
from pairbench.report._replacements import (
    Passed,
    first_attempts,
    passed_with,
    passed_without,
    replaced_trials,
)
from pairbench.store._records import SCORED_OUTCOMES, TrialResult

SCHEMA_ID = "pairbench.summary/1"
OUTCOME_ORDER = (
    "passed",
    "failed",
    "parse_failure",
    "agent_error",
    "timeout",
    "infra",
    "not_run",
    "interrupted",
)
ATTENTION_OUTCOMES = ("not_run", "infra", "interrupted", "agent_error")
ANSWER_EXCERPT = 300


def _arm(
    arm: str, rows: Sequence[TrialResult], attempts: Sequence[TrialResult], without: Passed
) -> dict[str, Any]:
    outcomes = dict.fromkeys(OUTCOME_ORDER, 0)
    # Final records and kept attempts (infra, interrupted) are tallied by their own outcome.
    for r in [*rows, *attempts]:
        outcomes[r.outcome] += 1
    scored = [r for r in rows if r.outcome in SCORED_OUTCOMES]
    passed = sum(r.outcome == "passed" for r in scored)
    valid = [r for r in scored if r.validity is not None and r.validity.valid]
    return {
        "arm": arm,
        "outcomes": outcomes,
        "scored": len(scored),
        "success": proportion(passed, len(scored)),
        "success_without_replacements": proportion(
            sum(without.get(arm, {}).values()), len(without.get(arm, {}))
        ),
        "success_not_run_as_miss": proportion(passed, len(scored) + outcomes["not_run"]),
        "success_valid_surface": proportion(sum(r.outcome == "passed" for r in valid), len(valid)),
        "invalid_trials": sum(r.validity is not None and not r.validity.valid for r in scored),
        "validity_unknown": sum(r.validity is None for r in scored),
    }


def _entry(r: TrialResult) -> dict[str, Any]:
    answer = r.final_answer
    if answer is not None and len(answer) > ANSWER_EXCERPT:
        answer = answer[:ANSWER_EXCERPT] + "…"
    return {
        "outcome": r.outcome,
        "arm": r.arm,
        "task": r.task,
        "trial": r.trial,
        "attempt": r.attempt,
        "reason": r.reason,
        "final_answer": answer,
    }


def _attention(
    kept: Sequence[TrialResult],
    infra: Sequence[TrialResult],
    arms: Sequence[str],
    tasks: Sequence[str],
    planned: int,
) -> dict[str, Any]:
    arm_rank = {a: i for i, a in enumerate(arms)}
    task_rank = {t: i for i, t in enumerate(tasks)}
    everything = [*kept, *infra]
    everything.sort(key=lambda r: (arm_rank.get(r.arm, 0), task_rank.get(r.task, 0), r.trial))
    out: dict[str, Any] = {
        "planned_trials": planned,
        "recorded_trials": len(kept),
        "scored_trials": sum(r.outcome in SCORED_OUTCOMES for r in kept),
        "infra_attempts": sum(r.outcome == "infra" for r in [*kept, *infra]),
        "interrupted_attempts": sum(r.outcome == "interrupted" for r in [*kept, *infra]),
    }
    for outcome in ATTENTION_OUTCOMES:
        out[outcome] = [_entry(r) for r in everything if r.outcome == outcome]
    return out


def _labels(run: Mapping[str, Any], records: Sequence[TrialResult]) -> dict[str, dict[str, Any]]:
    labels = {str(t["id"]): dict(t.get("labels") or {}) for t in run.get("tasks", [])}
    for r in records:  # a task the run did not declare: fall back to the record's labels
        labels.setdefault(r.task, dict(r.labels))
    return labels


def _planned(run: Mapping[str, Any]) -> int:
    # run.json may carry the count itself, the schedule as a list of planned trials, or a
    # schedule model dump whose pairs each list the arms they run.
    if isinstance(run.get("planned_trials"), int):
        return int(run["planned_trials"])
    schedule = run.get("schedule") or []
    if isinstance(schedule, Mapping):
        return sum(len(p.get("order", [])) for p in schedule.get("pairs", []))
    return len(schedule)


def build_summary(
    run: Mapping[str, Any], results: Sequence[TrialResult], infra: Sequence[TrialResult]
) -> dict[str, Any]:
    """The summary of a run: every number the reports show, as plain JSON values.

    ``run`` is the content of ``run.json``; ``results`` are the final records (one per
    arm, task and trial; planned trials with no record may come as ``not_run``), and
    ``infra`` the attempts kept beside them: infra failures and interrupted attempts,
    each counted by its own outcome. The schema is documented in ``SUMMARY_SCHEMA.md``
    next to this module.

    Example::

        summary = build_summary(json.loads((run_dir / "run.json").read_text()), results, infra)
        summary["arms"][0]["success"]  # {"k": 7, "n": 10, "estimate": 0.7, "low": ..., ...}
    """
    everything = [*results, *infra]
    arms = arm_order(run, everything)
    tasks = task_order(run, everything)
    by_key = latest(results)
    kept = [by_key[k] for k in sorted(by_key, key=lambda k: (k[0], k[1], k[2]))]
    scored = scored_by_arm(by_key, arms)
    first = first_attempts(by_key, infra)
    with_, without = passed_with(by_key, arms), passed_without(first, arms)
    experiment = run.get("experiment") or {}
    planned = _planned(run)
    ran = sum(r.outcome != "not_run" for r in kept)
    labels = _labels(run, everything)
    tiers = {t: labels.get(t, {}).get("tier") for t in tasks}
    return {
        "schema_id": SCHEMA_ID,
        "confidence": CONFIDENCE,
        "run": {
            "run_id": run.get("run_id"),
            "experiment": {k: experiment.get(k) for k in ("id", "version", "description")},
            "status": run.get("status"),
            "started_at": run.get("started_at"),
            "ended_at": run.get("ended_at"),
            "simulated": bool(run.get("agent_simulated")) or any(r.simulated for r in everything),
            "arms": arms,
            "comparisons": [list(c) for c in run.get("comparisons", [])],
            **run_provenance(run),
        },
        "empty": ran == 0 and not infra,
        "trials": ran,
        "not_run": len(kept) - ran,
        "planned_trials": planned,
        "kept_attempts": len(infra),
        "replaced_attempts": len(replaced_trials(first)),
        "arms": [
            _arm(a, [r for r in kept if r.arm == a], [r for r in infra if r.arm == a], without)
            for a in arms
        ],
        "pairs": pair_summaries(run, arms, tasks, scored, with_, without),
        "tasks": _sections.task_table(tasks, labels, arms, scored),
        "tiers": _sections.tier_table(tiers, arms, scored),
        "crossover": _sections.crossover(tasks, arms, scored),
        "transport": _sections.transport(arms, scored),
        "security": _sections.security(arms, scored),
        "cost": _sections.cost(arms, scored),
        "seeding": seeding(arms, scored),
        "manual_review": manual_review(run, kept),
        "attention": _attention(kept, infra, arms, tasks, planned),
    }
