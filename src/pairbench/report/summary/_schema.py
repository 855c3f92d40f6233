"""The models of ``summary.json``: :class:`Summary` and its parts, one docstring per key.

``summarize`` validates what it builds through :class:`Summary`, so a key added without
a field here (or in ``_schema_pairs``, ``_schema_arms``, ``_schema_hypotheses``,
``_schema_scores``) fails loudly. ``SUMMARY_SCHEMA.md`` is generated from these models
(``python -m pairbench._schema_doc``). Free-form parts, keyed by data rather than by name
(outcomes, arms, reasons), are typed as dicts.

**Usage**::

    summary = Summary.model_validate_json((run_dir / "summary.json").read_text())
    summary.arms[0].success.estimate  # 0.7
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, JsonValue

from pairbench.report.summary._schema_arms import (
    ArmCost,
    ArmMountedProof,
    ArmRequests,
    ArmSecurity,
    ArmSeeding,
    ArmTransport,
)
from pairbench.report.summary._schema_hypotheses import HypothesisResult, PrimaryResult
from pairbench.report.summary._schema_pairs import (
    ArmName,
    Pair,
    Proportion,
    Record,
    TaskName,
    TrialIndex,
)
from pairbench.report.summary._schema_scores import FailureGroup, FieldAccuracy, Spread, TrialRef

SCHEMA_ID = "pairbench.summary/3"
"""Bumped by any change that removes or re-types a key."""


class Experiment(Record):
    """The experiment the run belongs to, from run.json."""

    id: str | None
    """The experiment's id."""
    version: str | None
    """Its version."""
    description: str | None
    """Its description."""
    limits: list[str]
    """The protocol's stated limits (experiment `limits:`), in declared order; every report
    prints them."""
    sections: list[str] | None
    """The report sections the experiment declares (`report.sections`); `null`: every
    section that applies."""
    plots: list[str] | None
    """The plots it declares (`report.plots`); `null`: the default plots."""


class StudySlot(Record):
    """The named study's own part of the summary (its ``SCHEMA.md`` documents `data`)."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    name: str
    """The study the experiment names."""
    version: str | None
    """The study plugin's version; `null` when it is not installed."""
    schema_: str | None = Field(alias="schema")
    """The id of `data`'s schema; `null` when the study adds no report part."""
    data: dict[str, JsonValue] | None
    """The study's part, as its own model dumped it; `null` when it has nothing for this
    run, adds no report part, or is not installed."""
    missing: str | None
    """Why the study's part and sections are missing (the study is not installed here), or
    `null`."""


class ArmIdentity(Record):
    """Who ran one arm. Each identity comes from run.json `identities.arms.<arm>` (`agent`
    and `model` fall back to run.json `agents.<arm>`), a string or `null` when not
    recorded."""

    arm: ArmName
    agent: str | None
    """The adapter."""
    model: str | None
    """The declared model."""
    tool_discovery: str | None
    """How the agent is offered its tools: run.json
    `identities.arms.<arm>.tool_discovery`, e.g. `"false"` when Claude Code's
    `ENABLE_TOOL_SEARCH` is pinned off, or `"not applicable (...)"` for adapters that offer
    every tool directly; a non-string value as JSON text."""
    agent_version: str | None
    """The agent's own version, e.g. a CLI's."""
    models_seen: list[str]
    """The distinct model ids the arm's records report their model requests used, final
    and kept attempts, sorted; empty when none was reported."""


class SummaryRun(Record):
    """The run itself, from run.json, and what the summary was built from."""

    run_id: str | None
    """The run's id."""
    experiment: Experiment
    """The experiment."""
    status: str | None
    """The run's status."""
    started_at: str | None
    """When the run started (ISO 8601)."""
    ended_at: str | None
    """When the run ended (ISO 8601)."""
    simulated: bool
    """run.json's `agent_simulated`, or any simulated record."""
    arms: list[str]
    """The arms, in declared order (then any undeclared ones found in records, sorted)."""
    arm_identities: list[ArmIdentity]
    """Per arm in declared order: who ran it."""
    comparisons: list[list[str]]
    """Declared `[a, b]` pairs."""
    case_set: str | None
    """From pre-registration: `calibration`, `held-out`, or `null` for all tasks."""
    stage: str | None
    """A campaign experiment's stage (`order: {block: campaign}`): `screening` (one
    campaign pair: no p value, no hypothesis judged) or `confirmation` (an approved plan's
    pairs); `null` for other runs."""
    sitting: int | None
    """Which sitting of the held-out set under this lock (1 the first; `pairbench run
    --new-sitting` starts another); `null` for other runs."""
    lock_sha256: str | None
    """SHA-256 of the run's `lock.json`."""
    lock_verified: bool | None
    """The experiment matched its `experiment.lock.json` at start."""
    accepted_harness_change: dict[str, JsonValue] | None
    """`null`, or {`expected`, `found`} when the run was started with
    `--accept-harness-change`."""
    protocol_version: str | None
    """The protocol's version the run ran under, from the ledger beside the lock (`pairbench
    freeze --new-version` sets a new one); `null` without a lock."""
    ledger: dict[str, JsonValue] | None
    """The run's line in the ledger: `file`, `seq`, `line_sha256`, and `new_sitting` (the
    sitting was started with `--new-sitting`); `null` without a lock."""
    plan: dict[str, JsonValue] | None
    """A confirmation's plan: `file`, `sha256`, `approved_by`, `approved_at`,
    `screening_run`, and `approvals` (every approval in the ledger of a plan from the same
    screening: `seq`, `plan_sha256`, `plan_file`, `by`, `approved_at`); `null` otherwise."""
    accepted_changes: list[dict[str, JsonValue]] | None
    """Differences from the lock the run was started with (`--accept-change`): `kind`,
    `name`, `expected`, `found`; `null` when none."""
    model_server: dict[str, JsonValue] | None
    """`null`, or the local model server the run used (`--model-server local`): `model`,
    `model_package`, `model_sha256`, `llama_cpp` (the sdist), `llama_cpp_sha256`,
    `binary_sha256`, `build_info` (an sdist build reads `b0-unknown`), `slots`,
    `cache_prompt`."""
    journal_head: str | None
    """SHA-256 of the journal's last line, which pins every line and run.json; `null` when
    built from records alone."""
    manual_review_sha256: str | None
    """SHA-256 of `manual_review.json`; `null` without one."""
    imported: dict[str, JsonValue] | None
    """For trials another harness ran (`pairbench import`): `importer`, `logs` (each with its
    facts: harness, version, path, sha256, model, generation settings, created at), `pairing`
    (paired count, unpaired per arm, differences, `a_a`) and `vouch` (what pairbench can and
    cannot vouch for, one sentence each; the report leads with them); `null` otherwise."""


class Arm(Record):
    """One arm's outcomes and success. Its statistics are over scored trials unless
    stated."""

    arm: ArmName
    outcomes: dict[str, int]
    """Count of each outcome: passed, failed, parse_failure, agent_error, timeout, output_limit,
    memory_limit, disk_limit, process_limit, infra,
    not_run, interrupted (in that order); kept attempts counted by their own outcome."""
    scored: int
    """Count of scored outcomes."""
    success: Proportion
    """Passed / scored, with replacements: each trial's final result."""
    success_without_replacements: Proportion
    """Over each trial's first attempt only: an infra-failed first attempt is a miss,
    scored and not passed."""
    success_not_run_as_miss: Proportion
    """Passed / (scored + not_run)."""
    success_valid_surface: Proportion
    """Over scored trials whose `validity.valid` is true."""
    invalid_trials: int
    """Scored trials whose `validity.valid` is false."""
    validity_unknown: int
    """Scored trials with no validity record."""


class TaskSuccess(Record):
    """Success of each arm on one task, over scored trials."""

    task: TaskName
    labels: dict[str, JsonValue]
    """The task's labels (run.json; for an undeclared task, its first record's)."""
    arms: dict[str, Proportion]
    """Per arm: success."""


class TierSuccess(Record):
    """Success of each arm over the tasks of one `labels.tier`."""

    tier: str | int | None
    """The tier; untiered tasks are under `null`."""
    tasks: list[str]
    """The tier's tasks."""
    arms: dict[str, Proportion]
    """Per arm: success."""


class TaskDiffering(Record):
    """A task whose pass count differs between arms."""

    task: TaskName
    passed: dict[str, int]
    """Per arm: passes."""
    scored: dict[str, int]
    """Per arm: scored trials."""


class StartOrder(Record):
    """Success by planned position within the pair."""

    position: int
    """The planned position (0 = ran first)."""
    arms: dict[str, Proportion]
    """Per arm: success at that position."""


class Crossover(Record):
    """Whether the arms differ by task, and whether running first or later matters."""

    tasks_differing: list[TaskDiffering]
    """Tasks whose pass count differs between arms."""
    by_start_order: list[StartOrder]
    """Success by planned position within the pair."""


class ReviewNote(TrialRef):
    """A note from the run's `manual_review.json`, shown beside the machine score, never
    changing it."""

    machine_outcome: str | None
    """The trial's recorded outcome; `null` when no record matches."""
    verdict: str
    """The reviewer's verdict."""
    note: str
    """The reviewer's note."""
    reviewer: str
    """Who reviewed."""


class AttentionEntry(Record):
    """One trial or attempt that needs attention. Agent text (`reason`, `final_answer`) is
    stored as given; renderers escape it."""

    outcome: str
    """Its outcome."""
    arm: ArmName
    task: TaskName
    trial: TrialIndex
    attempt: int
    """The attempt."""
    reason: str
    """Why (empty when none was recorded)."""
    final_answer: str | None
    """The agent's final answer (first 300 characters); `null` when none."""


class Attention(Record):
    """What needs attention, with its denominators. Lists by arm, task and trial (declared
    order); a trial's final record before its kept attempts."""

    planned_trials: int
    """Trials planned."""
    recorded_trials: int
    """Trials with a final record."""
    scored_trials: int
    """Trials with a scored outcome."""
    infra_attempts: int
    """Infra failures, final or kept."""
    interrupted_attempts: int
    """Interrupted attempts, final or kept."""
    workspaces_not_kept: int
    """Attempts whose workspace was over ``budget.workspace_kept``: part of its bytes
    replaced by a manifest of names, sizes and SHA-256."""
    workspace_files_not_kept: int
    """The files those attempts' workspaces did not keep."""
    not_run: list[AttentionEntry]
    """Planned trials that did not run."""
    infra: list[AttentionEntry]
    """Infra failures."""
    interrupted: list[AttentionEntry]
    """Interrupted attempts."""
    agent_error: list[AttentionEntry]
    """Agent errors."""


class Summary(Record):
    """The top-level object of `summary.json`."""

    schema_id: Literal["pairbench.summary/3"]
    """This schema."""
    confidence: float
    """Confidence of every interval (0.95)."""
    run: SummaryRun
    """The run itself."""
    bootstrap_reps: int
    """Resamples of each task-clustered bootstrap interval (`pairbench report
    --bootstrap-reps`); `pairbench verify` rebuilds the reports with it."""
    plots_drawn: bool
    """Whether report.html holds the plots. `pairbench run` and `resume` leave them out
    (drawing them costs about a second of the run's CPU) and the reports say how to draw
    them: `pairbench report` draws them, `pairbench view` always shows them; `pairbench
    verify` rebuilds the reports the same way."""
    empty: bool
    """Nothing ran and no attempt was kept (the reports say "No runs recorded.")."""
    trials: int
    """Trials that ran (final records other than `not_run`; one per arm, task, trial —
    the latest attempt)."""
    not_run: int
    """Planned trials recorded as `not_run`."""
    planned_trials: int
    """From run.json `planned_trials`, else the schedule's length (list) or its pairs' arm
    count (schedule model)."""
    kept_attempts: int
    """Records passed as kept attempts (infra failures and interrupted attempts)."""
    replaced_attempts: int
    """Trials whose first attempt failed for infra reasons and was replaced by a retry (or,
    when retries ran out, by nothing); 0 means "with" and "without replacements" agree and
    the reports say "no replaced attempts" once. Interrupted attempts are not
    replacements (the operator stopped the run; resume re-runs the trial)."""
    arms: list[Arm]
    """Per arm."""
    pairs: list[Pair]
    """Every unordered pair of arms in declared order."""
    primary: list[PrimaryResult]
    """The experiment's declared `primary` analyses, in declared order (the reports lead
    with them); empty when it declares none."""
    hypotheses: list[HypothesisResult]
    """The experiment's declared `hypotheses`, in declared order, each judged; empty when it
    declares none."""
    tasks: list[TaskSuccess]
    """Per task."""
    tiers: list[TierSuccess]
    """Per `labels.tier`; an empty list when no task has one."""
    crossover: Crossover
    """Differences by task and by start order."""
    transport: list[ArmTransport]
    """Per arm."""
    model_requests: list[ArmRequests]
    """Per arm, when any record of the run reports its model requests; empty otherwise."""
    security: list[ArmSecurity]
    """Per arm."""
    cost: list[ArmCost]
    """Per arm, over its scored trials."""
    seeding: list[ArmSeeding]
    """Per arm."""
    mounted_proof: list[ArmMountedProof]
    """Per arm, when any attempt of the run has a mounted-byte proof; empty otherwise."""
    manual_review: list[ReviewNote]
    """From the run's `manual_review.json`; empty without one."""
    fields: list[FieldAccuracy]
    """Per scored field, for graders that score fields (`details.fields`), in first-seen
    order; empty otherwise."""
    failures: list[FailureGroup]
    """Every scored final trial that did not pass, grouped by outcome and reason, by falling
    count."""
    latency: Spread
    """The spread of wall time per arm and of its paired differences."""
    attention: Attention
    """Trials and attempts that need attention."""
    study: StudySlot | None
    """The part of the study the experiment names (`study:`), from its `report` hook; `null`
    for a plain experiment."""
