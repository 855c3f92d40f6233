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

from pairbench._errors import RunDirError
from pairbench.store._atomic import write_atomic
from pairbench.store._run_dir import RunDir
from pairbench.store._table import TrialTable

TABLE_FILE = "trials.npz"


@dataclass(frozen=True)
class RunTable:
    """A run directory read back as columns, the way reports read it."""

    run_dir: RunDir
    info: dict[str, Any]
    table: TrialTable
    """Every stored record, then a ``not_run`` row per planned trial without a result."""
    source: str
    """Where the rows came from: ``trials.npz``, ``journal`` or ``result files``."""


def _journal_rows(run_dir: RunDir) -> list[dict[str, Any]] | None:
    """Rows of every committed record, in journal order; None if an event predates rows."""
    rows = []
    for event in run_dir.journal_events():
        if event.get("event") != "attempt_finished" or event.get("result") is None:
            continue  # a crash-recovered interrupted attempt left no record to tabulate
        row = event.get("row")
        if not isinstance(row, dict):
            return None
        rows.append(row)
    return rows


def _journal_mark(run_dir: RunDir) -> dict[str, Any]:
    """What the cache was built from: the journal's size and a hash of its last 4 KiB (a
    size alone could match again after a torn tail was cut and other lines appended)."""
    path = run_dir.journal_path
    if not path.exists():
        return {"journal_bytes": 0, "journal_tail_sha256": None}
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(max(0, size - 4096))
        tail = hashlib.sha256(handle.read()).hexdigest()
    return {"journal_bytes": size, "journal_tail_sha256": tail}


def _stored_table(run_dir: RunDir) -> tuple[TrialTable, str]:
    cache = run_dir.path / TABLE_FILE
    mark = _journal_mark(run_dir)
    if cache.is_file():
        try:
            with np.load(cache, allow_pickle=False) as data:
                table, meta = TrialTable.from_npz(data)
            if all(meta.get(k) == v for k, v in mark.items()):
                return table, TABLE_FILE
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            pass  # a damaged cache is rebuilt, never trusted: the journal is the record
    rows = _journal_rows(run_dir)
    if rows is not None:
        table, source = TrialTable.from_rows(rows), "journal"
    else:  # a run written before the journal carried rows: read the result files
        kept = [*run_dir.infra_attempts(), *run_dir.interrupted_attempts()]
        table, source = TrialTable.from_results(run_dir.results(), kept), "result files"
    with contextlib.suppress(OSError):  # a read-only run still reports, just uncached
        write_atomic(cache, table.to_bytes(mark))
    return table, source


def _not_run(info: dict[str, Any], table: TrialTable) -> TrialTable:
    """A ``not_run`` row for each planned trial that has no final result."""
    schedule = info.get("schedule")
    if not isinstance(schedule, dict):
        return table
    final = ~table.columns["kept"]
    arms = np.array(table.categories["arm"] + [""], dtype=object)
    tasks = np.array(table.categories["task"] + [""], dtype=object)
    have = set(
        zip(
            arms[table.columns["arm"][final]].tolist(),
            tasks[table.columns["task"][final]].tolist(),
            table.columns["trial"][final].tolist(),
            strict=True,
        )
    )
    status = str(info.get("status", "unknown"))
    labels = {str(t["id"]): t.get("labels") or {} for t in info.get("tasks", [])}
    rows = []
    for pair in schedule.get("pairs", []):
        task, trial = str(pair["task"]), int(pair["trial"])
        for position, arm in enumerate(pair["order"]):
            if (arm, task, trial) in have:
                continue
            rows.append(
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
                    "valid": -1,
                    "injection": -1,
                }
            )
    return table.concat(TrialTable.from_rows(rows)) if rows else table


def load_table(path: Path) -> RunTable:
    """Read ``run.json`` and the run's records as a :class:`TrialTable`.

    Uses ``trials.npz`` when it was built from the journal as it is now; otherwise builds
    it from the journal's rows (or, for runs that predate them, from the result files)
    and writes it. Planned trials with no final result are added as ``not_run`` rows
    (not written). The report reads runs this way.
    """
    run_dir = RunDir.open(path)
    info = run_dir.read_run_json()
    try:
        table, source = _stored_table(run_dir)
    except ValueError as exc:
        raise RunDirError(f"{run_dir.path}: cannot read the run's records ({exc})") from exc
    return RunTable(run_dir=run_dir, info=info, table=_not_run(info, table), source=source)
