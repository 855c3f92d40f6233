"""A run as its readers see it: ``run.json`` (any version) with the journal's run events.

:class:`~pairbench.store._run_info.RunInfo` is what the runner writes, once. This is what
every reader gets back (reports, ``verify``, ``compare``, ``resume``, the held-out gate):
the fields they rely on, typed, with defaults for fields that older runs lack, and the
status, end time, invocations and executor folded in from the journal. Any other field of
run.json passes through unchecked (``model_extra``).

run.json is written whole by the runner, so a field of the wrong type means the file was
damaged or edited: checked on read, that is one error naming the file (``read_run_info``),
not a traceback from deep inside a report.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from pairbench.store._events import EVENT_ADAPTER, RunEnded, RunResumed, RunStarted


class _Shape(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class RunExperiment(_Shape):
    """Which experiment ran."""

    id: str
    version: str | None = None
    description: str | None = None


class RunTask(_Shape):
    """A task the run may schedule."""

    id: str
    labels: dict[str, Any] | None = None


class RunAgent(_Shape):
    """An arm's agent: its adapter and settings (secrets as name and SHA-256)."""

    adapter: str | None = None
    settings: dict[str, Any] | None = None


class RunIdentities(_Shape):
    """pairbench, Python, platform, packages, sources, and per arm its identity."""

    arms: dict[str, dict[str, Any] | None] | None = None


class RunBudget(_Shape):
    trial_timeout_s: float | None = None


class RunPolicies(_Shape):
    budget: RunBudget | None = None


class RunExecutor(_Shape):
    """Where the latest invocation ran attempts: ``local`` or ``ray`` (and its address)."""

    name: str
    address: str | None = None


class Invocation(_Shape):
    """One ``pairbench run`` or ``resume`` of the run."""

    command: str
    at: str | None = None
    executor: str | None = None


class RunPriorSpend(_Shape):
    """Spend before the run that its study counted against the ceiling."""

    usd: float
    sources: list[str] = Field(default_factory=list)
    overshoot_usd: float | None = None


class RunRecord(_Shape):
    """run.json as read back, with what the journal says happened since (module docstring)."""

    run_id: str
    experiment: RunExperiment
    status: str = "unknown"
    """running, complete, interrupted, stopped or failed (from the journal's run events)."""
    started_at: str | None = None
    ended_at: str | None = None
    experiment_file: str | None = None
    canonical_hash: str | None = None
    experiment_model: dict[str, Any] | None = None
    arms: list[str] = Field(default_factory=list)
    comparisons: list[list[str]] = Field(default_factory=list)
    tasks: list[RunTask] = Field(default_factory=list)
    agents: dict[str, RunAgent | None] = Field(default_factory=dict)
    identities: RunIdentities | None = None
    policies: RunPolicies | None = None
    schedule: dict[str, Any] | list[Any] | None = None
    """A schedule model dump (``Schedule``), kept as JSON: a million pairs validate slowly,
    so readers that need the model validate it (a list in runs that predate it)."""
    planned_trials: int | None = None
    run_seed: int | None = None
    concurrency: int | None = Field(default=None, ge=1)
    executor: RunExecutor | None = None
    invocations: list[Invocation] = Field(default_factory=list)
    case_set: str | None = None
    sitting: int | None = Field(default=None, validation_alias=AliasChoices("sitting", "campaign"))
    """Which sitting of the held-out set (``campaign`` in run.json files written before the
    word was freed for the runtime-revision protocol's campaigns)."""
    lock_sha256: str | None = None
    lock_verified: bool | None = None
    accepted_harness_change: dict[str, Any] | None = None
    model_server: dict[str, Any] | None = None
    """The local model server's identity (``pairbench.model.identity``: GGUF sha256 and
    header, llama.cpp package, binary sha256 and CMake flags, serve parameters, /props) when
    the run used one (``--model-server local``)."""
    agent_simulated: bool | None = None
    stage: str | None = None
    """``screening`` or ``confirmation`` for a campaign experiment's run; None otherwise."""
    plan: dict[str, Any] | None = None
    """The approved plan a confirmation run follows (``PlanRef``: file, sha256, approval)."""
    prior_spend: RunPriorSpend | None = None
    """Spend before the run its study counted against the ceiling (``Study.before_run``)."""
    ledger: dict[str, Any] | None = None
    """The run's line in the ledger beside the lock (``LedgerRef``): protocol version,
    sitting, the approvals of its plan's lineage; None without a lock or before ledgers."""
    accepted_changes: list[dict[str, Any]] | None = None
    """Differences from the lock the run accepted (``--accept-change``)."""

    imported: dict[str, Any] | None = None
    """For trials another harness ran: ``importers.ImportRecord`` as JSON; None otherwise."""

    def adapter(self, arm: str) -> str:
        """The arm's agent adapter, or ``""`` when run.json does not say."""
        agent = self.agents.get(arm)
        return agent.adapter or "" if agent is not None else ""

    def arm_identities(self) -> dict[str, dict[str, Any] | None]:
        """Per arm, its recorded identity (empty for runs that predate them)."""
        return (self.identities.arms if self.identities else None) or {}

    def trial_timeout_s(self) -> float | None:
        budget = self.policies.budget if self.policies else None
        return budget.trial_timeout_s if budget else None


_RUN_EVENT = re.compile(rb'"event": ?"run_(?:started|resumed|ended)"')
"""A run-level line's name (spaced as written before typed events, compact since): found
by pattern, so a million attempt lines are not parsed for it. Agent text cannot match: JSON
escapes its quotes."""


def _run_lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` that name a run event, each once, in order."""
    lines: list[bytes] = []
    end = 0
    for match in _RUN_EVENT.finditer(data):
        if match.start() < end:
            continue  # a second match on a line already taken
        start = data.rfind(b"\n", 0, match.start()) + 1
        end = data.find(b"\n", match.end())
        end = len(data) if end < 0 else end
        lines.append(data[start:end])
    return lines


def with_run_events(record: RunRecord, journal: Path) -> RunRecord:
    """``record`` with what changed after run.json was written, from the journal's run
    events (``run_started``, ``run_resumed``, ``run_ended``): status, end time, invocations
    and executor. Runs written before those events kept them in run.json: its values are
    the starting point, and any run events after them win.
    """
    try:
        data = journal.read_bytes()
    except OSError:
        return record  # no journal, or unreadable: the journal's own reader names it
    status, ended_at, executor = record.status, record.ended_at, record.executor
    invocations = list(record.invocations)
    for line in _run_lines(data):
        try:
            event = EVENT_ADAPTER.validate_json(line)
        except ValidationError:
            continue  # a torn tail, or damage the journal's reader reports
        if isinstance(event, RunEnded):
            status, ended_at = event.status, event.at
        elif isinstance(event, RunStarted | RunResumed):
            status, ended_at = "running", None
            if event.executor is not None:
                executor = RunExecutor.model_validate(event.executor.model_dump())
                invocations.append(
                    Invocation(command=event.command, at=event.at, executor=event.executor.name)
                )
    return record.model_copy(
        update={
            "status": status,
            "ended_at": ended_at,
            "executor": executor,
            "invocations": invocations,
        }
    )
