"""Reading a run back as a trial table: ``trials.npz``, rebuilt from the journal when stale."""

from __future__ import annotations

import contextlib
import hashlib
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter, ValidationError

from pairbench._atomic import write_atomic
from pairbench._errors import RunDirError
from pairbench.store._events import AttemptFinished, TrialRow
from pairbench.store._load_run import _records, read_run_info
from pairbench.store._records import first_error
from pairbench.store._replaced import as_kept, superseded
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.store._table import TrialTable

TABLE_FILE = "trials.npz"
_ROWS: TypeAdapter[list[TrialRow]] = TypeAdapter(list[TrialRow])


@dataclass(frozen=True)
class RunTable:
    """A run directory read back as columns, the way reports read it."""

    run_dir: RunDir
    info: RunRecord
    table: TrialTable
    """Every stored record, then a ``not_run`` row per planned trial without a result."""
    source: str
    """Where the rows came from: ``trials.npz``, ``journal`` or ``result files``."""


def _journal_rows(run_dir: RunDir) -> list[TrialRow] | None:
    """Rows of every committed record, in journal order; None if an event predates rows."""
    rows: list[TrialRow] = []
    events = run_dir.journal_events()
    moved = superseded(events)  # an incomplete campaign's records: kept rows from then on
    for event in events:
        if not isinstance(event, AttemptFinished) or event.result is None:
            continue  # a crash-recovered interrupted attempt left no record to tabulate
        event = as_kept(event, moved)
        if event.row is None:
            return None
        rows.append(event.row)
    return rows


def _bad_row(run_dir: RunDir) -> str:
    """Which ``attempt_finished`` event holds the first row the table cannot take."""
    for event in run_dir.journal_events():
        if isinstance(event, AttemptFinished) and event.row is not None:
            try:
                TrialTable.from_rows([event.row])
            except ValueError:
                return f"the row of attempt {event.key} (attempt {event.attempt})"
    return "a row"


def _journal_mark(run_dir: RunDir) -> dict[str, Any]:
    """What the cache was built from: the journal's head (the hash of its last line) and
    the hash of the file up to it. The head alone pins every line only once the chain is
    checked (``verify``); hashing the file costs a fraction of parsing it, which is what
    the cache saves, and refuses a cache built before any line was edited. Both leave out
    the report's trailing record of its own files (``RunDir.journal_extent``): writing a
    report does not stale the table it was built from."""
    path = run_dir.journal_path
    head, left = run_dir.journal_extent()
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
                digest.update(chunk)
                left -= len(chunk)
    except FileNotFoundError:
        pass
    except OSError as exc:  # a folder where the journal should be, or unreadable
        raise RunDirError(
            f"{path}: cannot read the journal ({exc.strerror or exc}). Fix: restore it from a "
            "backup; it is the run's record"
        ) from None
    return {"journal_head": head, "journal_sha256": digest.hexdigest()}


def _stored_table(run_dir: RunDir, use_cache: bool = True) -> tuple[TrialTable, str]:
    cache = run_dir.path / TABLE_FILE
    mark = _journal_mark(run_dir)
    if use_cache and cache.is_file():
        try:
            with np.load(cache, allow_pickle=False) as data:
                table, meta = TrialTable.from_npz(data)
            if all(meta.get(k) == v for k, v in mark.items()):
                return table, TABLE_FILE
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
            pass  # a damaged cache is rebuilt, never trusted: the journal is the record
    rows = _journal_rows(run_dir)
    if rows is not None:
        try:
            table, source = TrialTable.from_rows(rows), "journal"
        except ValueError as exc:
            raise RunDirError(
                f"{run_dir.journal_path}: {_bad_row(run_dir)} is not a trial row ({exc}). "
                "Fix: restore the journal from a backup; the rows are what reports count"
            ) from None
    else:  # a run written before the journal carried rows: read the result files
        kept = [*_records(run_dir, "infra"), *_records(run_dir, "interrupted")]
        table = TrialTable.from_results(_records(run_dir, "results"), kept)
        source = "result files"
    if use_cache:
        with contextlib.suppress(OSError):  # a read-only run still reports, just uncached
            write_atomic(cache, table.to_bytes(mark))
    return table, source


def _not_run(run_dir: RunDir, info: RunRecord, table: TrialTable) -> TrialTable:
    """A ``not_run`` row for each planned trial that has no final result."""
    schedule = info.schedule
    if not isinstance(schedule, dict):
        return table
    try:
        rows = _not_run_rows(info, schedule, table)
        return table.concat(TrialTable.from_rows(rows)) if rows else table
    except (KeyError, TypeError, ValueError, AttributeError, ValidationError) as exc:
        # Read as plain JSON (a million pairs validate slowly), so its shape is checked here.
        why = (
            f"a pair has no {exc}"
            if isinstance(exc, KeyError)
            else first_error(exc)
            if isinstance(exc, ValidationError)
            else str(exc)
        )
        raise RunDirError(
            f"{run_dir.run_json}: the schedule is not a pairbench schedule ({why}). Fix: "
            "restore it from a backup (it holds the run's plan, which nothing else records)"
        ) from None


def _not_run_rows(info: RunRecord, schedule: dict[str, Any], table: TrialTable) -> list[TrialRow]:
    # Each (task, trial, arm) as one integer over the table's own codes, so the plan (a
    # million arms in a large run) is matched against the results by one np.isin rather
    # than a million tuples hashed into a set and looked up; a name or trial the table
    # never saw gets -1, which matches nothing.
    cols = table.columns
    final = ~cols["kept"]
    arm_code = {arm: i for i, arm in enumerate(table.categories["arm"])}
    task_code = {task: i for i, task in enumerate(table.categories["task"])}
    width = int(cols["trial"].max()) + 1 if len(cols["trial"]) else 1
    n_arms = max(len(arm_code), 1)

    def code(task: str, trial: int, arm: str) -> int:
        t, a = task_code.get(task, -1), arm_code.get(arm, -1)
        return (t * width + trial) * n_arms + a if t >= 0 and a >= 0 and 0 <= trial < width else -1

    have = (cols["task"][final].astype(np.int64) * width + cols["trial"][final]) * n_arms
    have += cols["arm"][final]
    pairs = schedule.get("pairs", [])
    each = (code(str(p["task"]), int(p["trial"]), arm) for p in pairs for arm in p["order"])
    missing = ~np.isin(np.fromiter(each, np.int64), have)
    if not missing.any():
        return []
    planned = [
        (str(pair["task"]), int(pair["trial"]), position, arm)
        for pair in pairs
        for position, arm in enumerate(pair["order"])
    ]
    missing_at = np.flatnonzero(missing).tolist()
    status = info.status
    labels = {t.id: t.labels or {} for t in info.tasks}
    rows = [
        {
            "arm": arm,
            "task": task,
            "trial": trial,
            "attempt": 0,
            "kept": False,
            "outcome": "not_run",
            "start_order": position,
            "reason": f"no result: run {status}",
            "labels": json.dumps(labels.get(task, {}), sort_keys=True),
        }
        for task, trial, position, arm in (planned[i] for i in missing_at)
    ]
    return _ROWS.validate_python(rows)  # in one call: a row at a time is slower


def load_table(path: Path, *, use_cache: bool = True) -> RunTable:
    """Read ``run.json`` and the run's records as a :class:`TrialTable`.

    Uses ``trials.npz`` when it was built from the journal as it is now; otherwise builds
    it from the journal's rows (or, for runs that predate them, from the result files)
    and writes it. Planned trials with no final result are added as ``not_run`` rows
    (not written). The report reads runs this way. ``use_cache=False`` neither reads nor
    writes ``trials.npz`` (``verify`` rebuilds from the record itself).
    """
    run_dir = RunDir.open(path)
    info = read_run_info(run_dir)
    table, source = _stored_table(run_dir, use_cache)
    return RunTable(run_dir=run_dir, info=info, table=_not_run(run_dir, info, table), source=source)
