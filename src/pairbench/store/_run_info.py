"""``run.json``: the run's plan and identities, as one typed record written once.

The runner builds a :class:`RunInfo` before the first attempt and writes it with the run
folder (``RunDir.create_locked``); it is never rewritten. What changes later — the status,
the end time, each invocation and its executor — is a journal event, folded in by
``read_run_info``. The journal's first line links to run.json's SHA-256, so an edit to it
is named by ``pairbench verify``.

Runs written by earlier versions (``pairbench.run/1``) kept ``status``, ``ended_at`` and
``invocations`` here and may lack later fields; readers accept them (``read_run_info``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pairbench._model import Frozen
from pairbench.schedule._confirmation import Approval
from pairbench.schedule._plan import Schedule

RUN_SCHEMA = "pairbench.run/2"
"""run.json's schema id: /2 is written once (no status, end time or invocations)."""


class ExperimentRef(Frozen):
    """Which experiment ran: its id, version and description, as declared."""

    id: str
    version: str
    description: str | None = None


class TaskRef(Frozen):
    """A task the run may schedule."""

    id: str
    labels: dict[str, Any] = Field(default_factory=dict)
    """The task's labels (tier, ...), as reports group by them."""
    case_set: str | None = None
    """``calibration`` or ``held-out``."""


class ExecutorRef(Frozen):
    """Where attempts run: ``local`` or ``ray`` (and its address)."""

    name: str
    """``local`` or ``ray``."""
    address: str | None = None
    """The Ray cluster's address (null: a new local Ray, or the local executor)."""


class Policies(Frozen):
    """The experiment's budget and infra policies, as they were when the run started."""

    budget: dict[str, Any]
    infra: dict[str, Any]


class PlanRef(Frozen):
    """The approved confirmation plan a run follows (``pairbench run --plan``)."""

    file: str
    """The plan file's path as given."""
    sha256: str
    """``plan_sha256`` of the plan: its canonical JSON without the approval."""
    approval: Approval
    """Who approved that hash, and when."""
    screening_run: str
    """The screening run the plan's estimates come from."""
    n_pairs: int = Field(ge=1)
    """The campaign pairs the plan declares (the run's trial indices 0..n-1)."""


class PriorSpend(Frozen):
    """Spend made before a run that counts against its cost ceiling, found by the
    experiment's study (``Study.before_run``): its calibration runs', say. Counted beside
    ``budget.prior_spend_usd``, which stays the place for spend made elsewhere."""

    usd: float = Field(ge=0, allow_inf_nan=False)
    sources: list[str] = Field(default_factory=list)
    """What was counted, one line each (a run's id and its spend)."""
    overshoot_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """The largest cost an attempt before the run had beyond its declared worst case: the
    run's reservations start raised to it (``runner._ceiling``)."""


class LedgerRef(Frozen):
    """What a run's ``run.json`` records of the ledger: the line it appended, and what the
    ledger said of the run (its sitting, the approvals of its plan's lineage)."""

    file: str
    """The ledger's absolute path (beside the experiment file): ``check_heads`` finds the
    runs of one ledger by it."""
    seq: int
    """The run's line in the ledger."""
    line_sha256: str
    """SHA-256 of that line: a ledger that lost or changed it is refused."""
    first_line_sha256: str
    """SHA-256 of the ledger's first line: which ledger this is."""
    protocol_version: str
    """The protocol's version the run ran under."""
    sitting: int | None = None
    """Which sitting of the held-out set (held-out runs)."""
    new_sitting: bool = False
    """Whether the sitting was asked for with ``--new-sitting``."""
    approvals: list[dict[str, Any]] = Field(default_factory=list)
    """For a confirmation: every approval of a plan from the same screening run, in ledger
    order (``seq``, ``plan_sha256``, ``plan_file``, ``by``, ``approved_at``); the plan run
    is the one whose ``plan_sha256`` matches."""


class RunInfo(Frozen):
    """Everything ``run.json`` holds (see the module docstring)."""

    schema_id: str = RUN_SCHEMA
    """``pairbench.run/2``."""
    run_id: str
    """The run's ID: experiment, UTC start time and 6 random hex digits."""
    experiment: ExperimentRef
    experiment_file: str
    """The experiment file's path as given (resume reloads it and compares hashes)."""
    canonical_hash: str
    """SHA-256 of the experiment's canonical form: resume refuses a changed experiment."""
    experiment_model: dict[str, Any]
    """The whole experiment as loaded (declared secrets kept as name and SHA-256)."""
    arms: list[str]
    """Arms in declared order."""
    comparisons: list[list[str]]
    """Declared ``[a, b]`` comparisons."""
    tasks: list[TaskRef]
    """The tasks of the run's case set, in declared order."""
    agents: dict[str, dict[str, Any]]
    """Per arm, its agent (adapter and settings; declared secrets as name and SHA-256)."""
    agent_simulated: bool
    """Whether any arm's adapter is simulated: every report of the run says so."""
    run_seed: int
    """The seed every trial's seeds derive from."""
    order_policy: str
    """How each pair's arm order was chosen (``alternate``, ``random``, ...)."""
    concurrency: int = Field(ge=1)
    """Attempts in flight at most; resume uses it too."""
    schedule: Schedule
    """Every planned pair: task, trial, seeds and arm order."""
    planned_trials: int = Field(ge=0)
    """Trials the schedule plans (one final result each)."""
    policies: Policies
    canary_env: str
    """The variable that carries the run's canary into each agent's environment."""
    identities: dict[str, Any]
    """pairbench, Python, platform, packages, sources and each arm's identity (tool
    discovery, pinned env, agent version): what ``compare`` checks."""
    started_at: str
    """When run.json was written (UTC, ISO 8601)."""
    executor: ExecutorRef
    case_set: str | None = None
    """``calibration``, ``held-out``, or None for every task."""
    sitting: int | None = None
    """Which sitting of the held-out set under this lock (None for other runs). Runs
    written before the word changed call it ``campaign``; :class:`RunRecord` reads both."""
    lock_sha256: str
    """SHA-256 of the run's ``lock.json`` (the experiment's lock as it was at the start)."""
    lock_verified: bool
    """Whether the experiment matched its ``experiment.lock.json`` at the start."""
    accepted_harness_change: dict[str, Any] | None = None
    """``{expected, found}`` when started with ``--accept-harness-change``."""
    model_server: dict[str, Any] | None = None
    """The local model server's identity (``pairbench.model.identity``: GGUF sha256 and
    header, llama.cpp package, binary sha256 and CMake flags, serve parameters, /props) when
    the run used one (``--model-server local``)."""
    stage: Literal["screening", "confirmation"] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    """A campaign experiment's stage: ``screening`` (one pair, no p value) or
    ``confirmation`` (an approved plan's pairs); left out for other runs."""
    plan: PlanRef | None = Field(default=None, exclude_if=lambda v: v is None)
    """The approved plan a confirmation run follows; left out for other runs."""
    prior_spend: PriorSpend | None = Field(default=None, exclude_if=lambda v: v is None)
    """Spend before this run that its study counted against the ceiling (``Study.before_run``);
    resume counts it again. Left out when the study counted none."""
    ledger: LedgerRef | None = Field(default=None, exclude_if=lambda v: v is None)
    """The line the run appended to the ledger beside the lock; left out without a lock."""
    accepted_changes: list[dict[str, Any]] | None = Field(default=None, exclude_if=lambda v: not v)
    """Each difference from the lock the run was started with (``--accept-change NAME``):
    kind, name, expected and found hashes; every report of the run leads with them."""

    imported: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    """For trials another harness ran (``pairbench import``): the importer's record
    (``importers.ImportRecord``: each log with its sha256, the pairing check, what pairbench
    can vouch for); left out for runs pairbench ran."""

    def encode(self) -> bytes:
        """run.json's bytes: sorted keys, two-space indent, one trailing newline."""
        import json

        data = self.model_dump(mode="json")
        return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")
