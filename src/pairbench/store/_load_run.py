"""Reading a run back: its plan, every final result, and every kept attempt."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pairbench._errors import RunDirError
from pairbench.schedule._plan import Schedule
from pairbench.store._journal import Journal, json_kind
from pairbench.store._records import TrialResult, first_error
from pairbench.store._run_dir import RunDir

_RESTORE = (
    "restore it from a backup (it holds the run's plan, which nothing else records), "
    "or start a new run"
)


class _Shape(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class _ExperimentRef(_Shape):
    id: str
    version: str | None = None
    description: str | None = None


class _TaskRef(_Shape):
    id: str
    labels: dict[str, Any] | None = None


class _AgentRef(_Shape):
    adapter: str | None = None
    settings: dict[str, Any] | None = None


class _Identities(_Shape):
    arms: dict[str, dict[str, Any] | None] | None = None


class _Budget(_Shape):
    trial_timeout_s: float | None = None


class _Policies(_Shape):
    budget: _Budget | None = None


class _Executor(_Shape):
    name: str
    address: str | None = None


class _RunInfo(_Shape):
    """The fields of ``run.json`` that its readers (reports, ``verify``, ``compare``,
    ``resume``) rely on, with their types; any other field passes through unchecked.

    ``run.json`` is written whole by the runner, so a field of the wrong type means the
    file was damaged or edited: checked on read, that is one error naming the file, not a
    traceback from deep inside a report. Fields older runs lack are optional.
    """

    run_id: str
    experiment: _ExperimentRef
    status: str = "unknown"
    started_at: str | None = None
    ended_at: str | None = None
    experiment_file: str | None = None
    canonical_hash: str | None = None
    experiment_model: dict[str, Any] | None = None
    arms: list[str] = Field(default_factory=list)
    comparisons: list[list[str]] = Field(default_factory=list)
    tasks: list[_TaskRef] = Field(default_factory=list)
    agents: dict[str, _AgentRef | None] = Field(default_factory=dict)
    identities: _Identities | None = None
    policies: _Policies | None = None
    schedule: dict[str, Any] | list[Any] | None = None
    """A schedule model dump (``Schedule``); a list in runs that predate it."""
    planned_trials: int | None = None
    run_seed: int | None = None
    concurrency: int | None = Field(default=None, ge=1)
    executor: _Executor | None = None
    invocations: list[dict[str, Any]] = Field(default_factory=list)
    case_set: str | None = None
    campaign: int | None = None
    lock_sha256: str | None = None
    lock_verified: bool | None = None
    accepted_harness_change: dict[str, Any] | None = None
    agent_simulated: bool | None = None


def read_run_info(run_dir: RunDir) -> dict[str, Any]:
    """``run.json``, checked to have the shape its readers rely on.

    **Usage**::

        info = read_run_info(RunDir.open(path))
        info["run_id"], info["schedule"]

    Raises ``RunDirError`` naming the file, what is wrong and the fix, for a ``run.json``
    that is not JSON, not an object, or has a field of the wrong type.
    """
    try:
        info = run_dir.read_run_json()
    except UnicodeDecodeError as exc:
        raise RunDirError(f"{run_dir.run_json}: not UTF-8 JSON ({exc}). Fix: {_RESTORE}") from None
    except RunDirError as exc:
        if isinstance(exc.__cause__, ValueError):  # not JSON: say how to get it back
            raise RunDirError(f"{exc}. Fix: {_RESTORE}") from None
        raise
    if not isinstance(info, dict):
        raise RunDirError(
            f"{run_dir.run_json}: not a pairbench run.json (a JSON {json_kind(info)}, not an "
            f"object). Fix: {_RESTORE}"
        )
    try:
        _RunInfo.model_validate(info)
    except ValidationError as exc:
        raise RunDirError(
            f"{run_dir.run_json}: not a pairbench run.json ({first_error(exc)}). Fix: {_RESTORE}"
        ) from None
    return _with_run_events(run_dir, info)


_RUN_EVENT = re.compile(rb'^.*"event": "run_(?:started|resumed|ended)".*$', re.MULTILINE)
"""A run-level line; found by pattern, so a million attempt lines are not parsed for it."""


def _with_run_events(run_dir: RunDir, info: dict[str, Any]) -> dict[str, Any]:
    """run.json with what changes after it is written, from the journal's run events.

    run.json is written once, before the first attempt; the run's status, end time,
    invocations and executor are journal events (``run_started``, ``run_resumed``,
    ``run_ended``). Runs written before that kept them in run.json: its values are the
    starting point, and any run events after them win.
    """
    try:
        data = run_dir.journal_path.read_bytes()
    except OSError:
        return info  # no journal, or unreadable: the journal's own reader names the problem
    out = dict(info)
    invocations = list(out.get("invocations") or [])
    for match in _RUN_EVENT.finditer(data):
        try:
            event = json.loads(match.group(0))
        except ValueError:
            continue  # a torn tail, or damage the journal's reader reports
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind == "run_ended":
            out["status"], out["ended_at"] = str(event.get("status")), event.get("at")
            continue
        out["status"], out["ended_at"] = "running", None
        executor = event.get("executor")
        if isinstance(executor, dict):
            out["executor"] = executor
            command = event.get("command", kind)
            invocations.append(
                {"command": command, "at": event.get("at"), "executor": executor.get("name")}
            )
    out["invocations"] = invocations
    return out


def _schedule(run_dir: RunDir, info: dict[str, Any]) -> Schedule | None:
    raw = info.get("schedule")
    if not isinstance(raw, dict):
        return None  # no schedule, or a run that predates the model: no not_run rows
    try:
        return Schedule.model_validate(raw)
    except ValidationError as exc:
        raise RunDirError(
            f"{run_dir.run_json}: the schedule is not a pairbench schedule "
            f"(schedule.{first_error(exc)}). Fix: {_RESTORE}"
        ) from None


def _records(run_dir: RunDir, folder: str) -> list[TrialResult]:
    """The records under ``folder`` (results, infra, interrupted), in path order.

    ``RunDir`` reads them the same way for the runner, but puts pydantic's multi-line
    report in its error; read here, a damaged record is one line naming it and the fix.
    """
    root = run_dir.path / folder
    out = []
    for file in sorted(root.rglob("*.json")) if root.is_dir() else []:
        try:
            out.append(TrialResult.model_validate_json(file.read_bytes()))
        except ValidationError as exc:
            reason = first_error(exc)
        except OSError as exc:  # a record path that is a folder, or unreadable
            reason = exc.strerror or str(exc)
        else:
            continue
        raise RunDirError(
            f"{file}: not a readable pairbench record ({reason}). Fix: restore it from a "
            "backup, or move it out of the run and run `pairbench resume` to run that trial "
            "again"
        )
    return out


@dataclass(frozen=True)
class LoadedRun:
    """A run directory read back for analysis and reports."""

    run_dir: RunDir
    info: dict[str, Any]
    results: list[TrialResult]
    """One per planned trial: stored results, plus ``not_run`` for planned trials without one."""
    infra: list[TrialResult]
    interrupted: list[TrialResult]


def load_run(path: Path) -> LoadedRun:
    """Read ``run.json``, results, and kept attempts.

    A planned trial with no stored result (the run stopped or was interrupted before it)
    is reported as ``not_run`` with the run's status as the reason; nothing is written.
    Raises ``RunDirError`` naming the first file that cannot be read.
    """
    run_dir = RunDir.open(path)
    info = read_run_info(run_dir)
    stored = _records(run_dir, "results")
    have = {(r.arm, r.task, r.trial) for r in stored}
    missing: list[TrialResult] = []
    schedule = _schedule(run_dir, info)
    status = str(info.get("status", "unknown"))
    labels = {t["id"]: t.get("labels") or {} for t in info.get("tasks", [])}
    agents = info.get("agents", {})
    for pair in schedule.pairs if schedule else []:
        for position, arm in enumerate(pair.order):
            if (arm, pair.task, pair.trial) in have:
                continue
            missing.append(
                TrialResult(
                    run_id=str(info["run_id"]),
                    experiment=str(info["experiment"]["id"]),
                    arm=arm,
                    task=pair.task,
                    trial=pair.trial,
                    labels=labels.get(pair.task, {}),
                    seed=pair.seed,
                    model_seed=pair.model_seed,
                    attempt=0,
                    start_order=position,
                    outcome="not_run",
                    reason=f"no result: run {status}",
                    agent=str((agents.get(arm) or {}).get("adapter") or ""),
                )
            )
    return LoadedRun(
        run_dir=run_dir,
        info=info,
        results=stored + missing,
        infra=_records(run_dir, "infra"),
        interrupted=_records(run_dir, "interrupted"),
    )


def check_run(path: Path) -> None:
    """Read every file ``resume`` will, raising ``RunDirError`` naming the first that is
    damaged: ``run.json`` (which must hold a schedule), the journal and every record.

    The runner trusts the files it wrote; checked first, a damaged one is one clear error
    before anything is changed, not a traceback half-way through recovery.
    """
    loaded = load_run(path)
    if not isinstance(loaded.info.get("schedule"), dict):
        raise RunDirError(
            f"{loaded.run_dir.run_json}: holds no schedule, so what the run planned is "
            f"unknown. Fix: {_RESTORE}"
        )
    Journal.read(loaded.run_dir.journal_path)
