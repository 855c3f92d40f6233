"""Reading a run back: its plan, every final result, and every kept attempt."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from pairbench._errors import RunDirError
from pairbench.schedule._plan import Schedule
from pairbench.store._journal import Journal, json_kind
from pairbench.store._records import TrialResult, first_error
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord, with_run_events

_RESTORE = (
    "restore it from a backup (it holds the run's plan, which nothing else records), "
    "or start a new run"
)


def read_run_info(run_dir: RunDir) -> RunRecord:
    """``run.json`` as a :class:`RunRecord`, with the journal's run events folded in.

    **Usage**::

        record = read_run_info(RunDir.open(path))
        record.run_id, record.status, record.schedule

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
        record = RunRecord.model_validate(info)
    except ValidationError as exc:
        raise RunDirError(
            f"{run_dir.run_json}: not a pairbench run.json ({first_error(exc)}). Fix: {_RESTORE}"
        ) from None
    return with_run_events(record, run_dir.journal_path)


def _schedule(run_dir: RunDir, info: RunRecord) -> Schedule | None:
    raw = info.schedule
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
    info: RunRecord
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
    labels = {t.id: t.labels or {} for t in info.tasks}
    for pair in schedule.pairs if schedule else []:
        for position, arm in enumerate(pair.order):
            if (arm, pair.task, pair.trial) in have:
                continue
            missing.append(
                TrialResult(
                    run_id=info.run_id,
                    experiment=info.experiment.id,
                    arm=arm,
                    task=pair.task,
                    trial=pair.trial,
                    labels=labels.get(pair.task, {}),
                    seed=pair.seed,
                    model_seed=pair.model_seed,
                    attempt=0,
                    start_order=position,
                    outcome="not_run",
                    reason=f"no result: run {info.status}",
                    agent=info.adapter(arm),
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
    if not isinstance(loaded.info.schedule, dict):
        raise RunDirError(
            f"{loaded.run_dir.run_json}: holds no schedule, so what the run planned is "
            f"unknown. Fix: {_RESTORE}"
        )
    Journal.read(loaded.run_dir.journal_path)
