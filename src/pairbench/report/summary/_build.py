"""``build_summary``: a run's records to the machine-readable summary (``summary.json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from pairbench.report.summary import _sections
from pairbench.report.summary._common import CONFIDENCE, OUTCOME_ORDER, no_p_value, proportion
from pairbench.report.summary._frame import Frame, build_frame
from pairbench.report.summary._hypotheses import hypotheses
from pairbench.report.summary._metric_values import METRICS, metric_values
from pairbench.report.summary._paired_metrics import spread
from pairbench.report.summary._pairs import BOOTSTRAP_REPS, pair_summaries
from pairbench.report.summary._primary import primary
from pairbench.report.summary._provenance import (
    arm_identities,
    manual_review,
    mounted_proof,
    run_provenance,
    seeding,
)
from pairbench.report.summary._replacements import (
    Passed,
    passed_with,
    passed_without,
    replaced_trials,
)
from pairbench.report.summary._schema import SCHEMA_ID, Summary
from pairbench.report.summary._scores import failure_reasons, field_accuracy
from pairbench.store._records import SCORED_OUTCOMES, TrialResult
from pairbench.store._run_record import RunRecord
from pairbench.store._table import TrialTable

ATTENTION_OUTCOMES = ("not_run", "infra", "interrupted", "agent_error")


def _arm(frame: Frame, i: int, without: Passed) -> dict[str, Any]:
    table, arm = frame.table, frame.arms[i]
    codes = table.columns["outcome"]
    # Final records and kept attempts (infra, interrupted) are tallied by their own outcome.
    mine = np.concatenate([frame.of_arm(frame.final, i), frame.of_arm(frame.kept, i)])
    tally = np.bincount(codes[mine], minlength=len(frame.outcome))
    outcomes = dict.fromkeys(OUTCOME_ORDER, 0)
    for code, name in enumerate(frame.outcome):
        outcomes[name] += int(tally[code])
    scored = frame.of_arm(frame.scored, i)
    passed = frame.mask("passed")[scored]
    valid = table.columns["valid"][scored]
    k = int(passed.sum())
    arm_without = without[arm].passed
    return {
        "arm": arm,
        "outcomes": outcomes,
        "scored": len(scored),
        "success": proportion(k, len(scored)),
        "success_without_replacements": proportion(int(arm_without.sum()), len(arm_without)),
        "success_not_run_as_miss": proportion(k, len(scored) + outcomes["not_run"]),
        "success_valid_surface": proportion(int(passed[valid == 1].sum()), int((valid == 1).sum())),
        "invalid_trials": int((valid == 0).sum()),
        "validity_unknown": int((valid < 0).sum()),
    }


def _attention(frame: Frame, planned: int) -> dict[str, Any]:
    table = frame.table
    everything = np.concatenate([frame.final, frame.kept])
    codes = table.columns["outcome"]
    dropped = table.columns["workspace_dropped_files"][everything]
    out: dict[str, Any] = {
        "planned_trials": planned,
        "recorded_trials": len(frame.final),
        "scored_trials": int(frame.mask(*SCORED_OUTCOMES)[frame.final].sum()),
        "infra_attempts": int(frame.mask("infra")[everything].sum()),
        "interrupted_attempts": int(frame.mask("interrupted")[everything].sum()),
        "workspaces_not_kept": int((dropped > 0).sum()),
        "workspace_files_not_kept": int(dropped.sum()),
    }
    # Listed by arm, task and trial (declared order); a trial's final record before its
    # kept attempts, kept attempts in the order stored.
    listed = everything[frame.mask(*ATTENTION_OUTCOMES)[everything]]
    group = np.isin(listed, frame.kept).astype(np.int64)
    listed = listed[np.lexsort((group, frame.trial[listed], frame.task[listed], frame.arm[listed]))]
    out |= {outcome: [] for outcome in ATTENTION_OUTCOMES}
    answers, reasons = table.categories["answer"], table.categories["reason"]
    for r in listed.tolist():
        answer = int(table.columns["answer"][r])
        reason = int(table.columns["reason"][r])
        out[frame.outcome[codes[r]]].append(
            {
                "outcome": frame.outcome[codes[r]],
                "arm": frame.arms[frame.arm[r]],
                "task": frame.tasks[frame.task[r]],
                "trial": int(frame.trial[r]),
                "attempt": int(table.columns["attempt"][r]),
                "reason": reasons[reason] if reason >= 0 else "",
                "final_answer": answers[answer] if answer >= 0 else None,
            }
        )
    return out


def _declared_report(run: RunRecord) -> dict[str, Any]:
    """The experiment's ``limits`` and ``report`` declarations, from run.json's model."""
    model = run.experiment_model or {}
    report = model.get("report") or {}
    return {
        "limits": list(model.get("limits") or []),
        "sections": report.get("sections"),
        "plots": report.get("plots"),
    }


def _planned(run: RunRecord) -> int:
    # run.json may carry the count itself, the schedule as a list of planned trials, or a
    # schedule model dump whose pairs each list the arms they run.
    if run.planned_trials is not None:
        return run.planned_trials
    schedule = run.schedule or []
    if isinstance(schedule, Mapping):
        return sum(len(p.get("order", [])) for p in schedule.get("pairs", []))
    return len(schedule)


def build_summary(
    run: RunRecord | Mapping[str, Any],
    results: Sequence[TrialResult],
    infra: Sequence[TrialResult],
) -> dict[str, Any]:
    """The summary of a run: every number the reports show, as plain JSON values.

    ``run`` is the run (``read_run_info``) or the content of ``run.json``; ``results``
    are the final records (one per arm, task and trial; planned trials with no record may
    come as ``not_run``), and
    ``infra`` the attempts kept beside them: infra failures and interrupted attempts,
    each counted by its own outcome. The schema is the model ``_schema.Summary``,
    documented in ``SUMMARY_SCHEMA.md`` next to this module. Same as :func:`summarize` on
    ``TrialTable.from_results``.

    Example::

        summary = build_summary(json.loads((run_dir / "run.json").read_text()), results, infra)
        summary["arms"][0]["success"]  # {"k": 7, "n": 10, "estimate": 0.7, "low": ..., ...}
    """
    return summarize(run, TrialTable.from_results(results, infra))


def summarize(
    run: RunRecord | Mapping[str, Any],
    table: TrialTable,
    *,
    bootstrap_reps: int = BOOTSTRAP_REPS,
    plots_drawn: bool = True,
    journal_head: str | None = None,
    reviews: Sequence[Mapping[str, Any]] = (),
    reviews_sha256: str | None = None,
    study: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The summary of a run from its trial table (``pairbench.store.load_table``).

    ``run`` is the run as ``read_run_info`` gives it (a run.json mapping is read the same
    way). Rows with ``kept`` false are final records, the others attempts kept beside them.
    ``bootstrap_reps`` sets the resamples of each task-clustered interval; it, the
    ``journal_head`` the table was read at and the manual ``reviews`` file's hash are
    recorded, so ``verify`` can rebuild the same bytes. ``study`` is the named study's
    slot (``_study_part.study_part``), else null. ``plots_drawn`` false records that the
    reports leave the plots out (``pairbench run``'s report), so ``verify`` does the same.
    """
    if not isinstance(run, RunRecord):
        run = RunRecord.model_validate(run)
    frame = build_frame(run, table)
    arms, tasks = frame.arms, frame.tasks
    values = {name: metric_values(table, name, frame.limit_ms) for name in METRICS}
    with_, without = passed_with(frame), passed_without(frame)
    experiment = run.experiment
    planned = _planned(run)
    ran = int((~frame.mask("not_run")[frame.final]).sum())
    labels = frame.labels()
    tiers = {t: labels.get(t, {}).get("tier") for t in tasks}
    simulated = bool(run.agent_simulated) or bool(table.columns["simulated"].any())
    built = {
        "schema_id": SCHEMA_ID,
        "confidence": CONFIDENCE,
        "run": {
            "run_id": run.run_id,
            "experiment": {
                "id": experiment.id,
                "version": experiment.version,
                "description": experiment.description,
                **_declared_report(run),
            },
            "status": run.status,
            "started_at": run.started_at,
            "ended_at": run.ended_at,
            "simulated": simulated,
            "arms": arms,
            "arm_identities": arm_identities(frame),
            "comparisons": [list(c) for c in run.comparisons],
            "stage": run.stage,
            **run_provenance(run),
            "journal_head": journal_head,
            "manual_review_sha256": reviews_sha256,
        },
        "bootstrap_reps": bootstrap_reps,
        "plots_drawn": plots_drawn,
        "empty": ran == 0 and not len(frame.kept),
        "trials": ran,
        "not_run": len(frame.final) - ran,
        "planned_trials": planned,
        "kept_attempts": len(frame.kept),
        "replaced_attempts": replaced_trials(frame),
        "arms": [_arm(frame, i, without) for i in range(len(arms))],
        "pairs": pair_summaries(frame, values, with_, without, bootstrap_reps),
        "primary": primary(frame, with_),
        # A screening pair judges no hypothesis: each would be a test on one pair.
        "hypotheses": [] if no_p_value(run) else hypotheses(frame, values),
        "tasks": _sections.task_table(frame, labels),
        "tiers": _sections.tier_table(frame, tiers),
        "crossover": _sections.crossover(frame),
        "transport": _sections.transport(frame),
        "model_requests": _sections.model_requests(frame),
        "security": _sections.security(frame),
        "cost": _sections.cost(frame),
        "seeding": seeding(frame),
        "mounted_proof": mounted_proof(frame),
        "manual_review": manual_review(frame, reviews),
        "fields": field_accuracy(frame),
        "failures": failure_reasons(frame),
        "latency": spread(frame, values["wall_ms"], "wall_ms", combinations(range(len(arms)), 2)),
        "attention": _attention(frame, planned),
        "study": study,
    }
    # Typed at the seam: a key without a model field, or a value of the wrong type, fails
    # here rather than in a reader of summary.json; the renderers then get plain JSON data,
    # in the models' key order. Lax like read_run_info, which checked run.json's fields to
    # the same types: a run.json it accepted ("sitting": "3") must not fail the report.
    return Summary.model_validate(built).model_dump(mode="json")
