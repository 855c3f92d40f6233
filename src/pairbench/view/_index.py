"""A run's trials as a few numpy columns: what the trial browser pages and filters over.

Built once per state of the run (see :class:`RunCache`) from, in this order:

- ``trials.npz`` when the run has ended and the table names the journal's head as it is
  now: only the columns a page shows are read (``numpy.load`` reads one array at a time),
  so a 100,000-trial run opens in tens of milliseconds and a few MB;
- the journal's rows otherwise (a run in progress, or one never reported), in memory only:
  the view never writes ``trials.npz``;
- the result files of a run that predates the journal's rows.

Planned trials without a final result are added as ``not_run`` lines, as reports add them.
Strings (arms, tasks, reasons, answers) stay categories with integer codes, so a text
filter looks at each distinct string once, not at each trial.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from pairbench._errors import RunDirError
from pairbench.store._events import AttemptFinished, AttemptStarted
from pairbench.store._load_run import _records
from pairbench.store._load_table import TABLE_FILE
from pairbench.store._replaced import as_kept, superseded
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.store._table import TABLE_SCHEMA, TrialTable

_CATS = ("arm", "task", "outcome", "reason", "answer")
_COLUMNS = (*_CATS, "trial", "attempt", "kept", "valid", "wall_ms")
"""The columns the browser reads of a trial table (every table version has them)."""
Arrays = dict[str, npt.NDArray[Any]]


@dataclass(frozen=True)
class TrialIndex:
    """Every record of a run (final and kept attempts) and a ``not_run`` line per planned
    trial without a final result, as columns of equal length."""

    columns: Arrays
    categories: dict[str, list[str]]
    source: str
    """``trials.npz``, ``journal`` or ``result files``."""
    arms: list[str]
    """Declared arms first, then any other arm a record names."""
    tasks: list[str]
    """Declared tasks first, then any other task a record names."""
    in_flight: int = 0
    """Attempts the journal has started and not finished (0 read from ``trials.npz``: the
    table is used only for an ended run)."""
    unrecorded: tuple[tuple[str, int], ...] = ()
    """Per arm, interrupted attempts a crash recovery finished without a record."""

    @cached_property
    def keys(self) -> npt.NDArray[np.int64]:
        """One int64 per row naming its (arm, task, trial): kept attempts find their trial."""
        c = self.columns
        tasks = max(len(self.categories["task"]), 1) + 1
        trials = int(c["trial"].max(initial=0)) + 1
        return ((c["arm"].astype(np.int64) + 1) * tasks + c["task"] + 1) * trials + c["trial"]

    @cached_property
    def final_order(self) -> npt.NDArray[np.int64]:
        """Rows of final results and not_run lines, in arm, task and trial order (the arms
        and tasks as declared)."""
        c = self.columns
        arm_rank = _ranks(self.categories["arm"], self.arms)
        task_rank = _ranks(self.categories["task"], self.tasks)
        final = np.flatnonzero(~c["kept"])
        order = np.lexsort(
            (c["trial"][final], task_rank[c["task"][final]], arm_rank[c["arm"][final]])
        )
        return final[order]

    @cached_property
    def kept_rows(self) -> npt.NDArray[np.int64]:
        """Rows of kept attempts, by key then attempt (``searchsorted`` on their keys)."""
        kept = np.flatnonzero(self.columns["kept"])
        return kept[np.lexsort((self.columns["attempt"][kept], self.keys[kept]))]

    def __len__(self) -> int:
        return len(self.columns["trial"])

    def strings(self, name: str, rows: npt.NDArray[Any]) -> list[str]:
        """Column ``name`` decoded at ``rows`` ("" for none)."""
        cats = self.categories[name]
        return ["" if c < 0 else cats[c] for c in self.columns[name][rows].tolist()]

    def outcome_counts(self) -> dict[str, Counter[str]]:
        """Per arm, final outcomes and kept attempts by outcome (``not_run`` left out)."""
        out: dict[str, Counter[str]] = {}
        outcomes = len(self.categories["outcome"]) + 1  # code -1 shifted to 0
        arm = self.columns["arm"].astype(np.int64)
        combined = arm * outcomes + self.columns["outcome"] + 1
        counts = np.bincount(combined[arm >= 0], minlength=0)
        for code in np.flatnonzero(counts).tolist():
            a, o, n = code // outcomes, code % outcomes - 1, int(counts[code])
            outcome = self.categories["outcome"][o] if o >= 0 else "interrupted"
            if outcome != "not_run" and a >= 0:
                out.setdefault(self.categories["arm"][a], Counter())[outcome] += n
        for name, n in self.unrecorded:
            out.setdefault(name, Counter())["interrupted"] += n
        return out


def _ranks(categories: list[str], order: list[str]) -> npt.NDArray[np.int64]:
    """Each category's place in ``order``, indexable by code (code -1: the last slot)."""
    place = {name: i for i, name in enumerate(order)}
    return np.array([place.get(c, len(order)) for c in categories] + [len(order)], np.int64)


def _from_table(columns: Any, categories: dict[str, list[str]]) -> Arrays:
    return {name: np.asarray(columns[name]) for name in _COLUMNS}


def _read_npz(run_dir: RunDir) -> tuple[Arrays, dict[str, list[str]]] | None:
    """The table's browser columns if ``trials.npz`` was built from the journal as it is."""
    path = run_dir.path / TABLE_FILE
    if not path.is_file():
        return None
    head, _ = run_dir.journal_extent()
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode("utf-8"))
            if not isinstance(meta, dict) or meta.get("schema_id") != TABLE_SCHEMA:
                return None
            # The head (the hash of the journal's last line) pins the journal's length and
            # last record; `verify`, not the view, checks the chain under it.
            if meta.get("journal_head") != head:
                return None
            categories = {k: list(meta["categories"][k]) for k in _CATS}
            columns = {name: np.asarray(data[f"col.{name}"]) for name in _COLUMNS}
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None  # a damaged or older table: the journal is the record
    n = len(columns["trial"])
    if any(len(v) != n for v in columns.values()):
        return None
    return columns, categories


class _Journal(NamedTuple):
    table: TrialTable
    in_flight: int
    unrecorded: Counter[str]


def _from_journal(run_dir: RunDir) -> _Journal | None:
    """The journal's rows as a table, the attempts in flight and those finished without a
    record; None if a row is missing (a run from before rows)."""
    events = run_dir.journal_events()
    moved = superseded(events)
    rows = []
    started: set[tuple[str, int]] = set()
    done: set[tuple[str, int]] = set()
    unrecorded: Counter[str] = Counter()
    for event in events:
        if isinstance(event, AttemptStarted):
            started.add((event.key, event.attempt))
        elif isinstance(event, AttemptFinished):
            done.add((event.key, event.attempt))
            if event.result is None:  # a crash-recovered interrupted attempt: no record
                unrecorded[event.key.split("/", 1)[0]] += 1
                continue
            event = as_kept(event, moved)
            if event.row is None:
                return None
            rows.append(event.row)
    try:
        return _Journal(TrialTable.from_rows(rows), len(started - done), unrecorded)
    except ValueError as exc:
        raise RunDirError(
            f"{run_dir.journal_path}: a trial row is not readable ({exc}). Fix: restore the "
            "journal from a backup; the rows are what reports count"
        ) from None


def _planned_missing(
    info: RunRecord, columns: Arrays, categories: dict[str, list[str]]
) -> list[tuple[str, str, int]]:
    """(arm, task, trial) of every planned trial with no final result, in schedule order.

    Keys are compared as int64 arrays, not as sets of tuples: a 100,000-trial schedule is
    one pass over its pairs and a ``numpy.isin``."""
    schedule = info.schedule
    pairs = schedule.get("pairs", []) if isinstance(schedule, dict) else []
    if not isinstance(pairs, list) or not pairs:
        return []
    arm_code = {a: i for i, a in enumerate(categories["arm"])}
    task_code = {t: i for i, t in enumerate(categories["task"])}
    planned: list[tuple[str, str, int]] = []
    for pair in pairs:
        order = pair.get("order") if isinstance(pair, dict) else None
        trial = pair.get("trial") if isinstance(pair, dict) else None
        if isinstance(order, list) and isinstance(trial, int) and not isinstance(trial, bool):
            task = str(pair.get("task"))
            planned += [(str(a), task, trial) for a in order]
    if not planned:
        return []
    width = int(max(columns["trial"].max(initial=0), max(n for _, _, n in planned))) + 1
    tasks = len(task_code) + 1

    def key(arm: Any, task: Any, trial: Any) -> Any:
        return (np.asarray(arm, np.int64) * tasks + task) * width + trial

    final = ~columns["kept"]
    have = key(columns["arm"][final], columns["task"][final], columns["trial"][final])
    wanted = key(
        np.array([arm_code.get(a, -1) for a, _, _ in planned], np.int64),
        np.array([task_code.get(t, -1) for _, t, _ in planned], np.int64),
        np.array([n for _, _, n in planned], np.int64),
    )
    # A name the table has never seen (code -1) can match nothing the table holds.
    unseen = np.array([a not in arm_code or t not in task_code for a, t, _ in planned])
    missing = unseen | ~np.isin(wanted, have)
    return [planned[i] for i in np.flatnonzero(missing).tolist()]


def _code(categories: dict[str, list[str]], name: str, value: str) -> int:
    cats = categories[name]
    try:
        return cats.index(value)
    except ValueError:
        cats.append(value)
        return len(cats) - 1


def _with_not_run(info: RunRecord, columns: Arrays, categories: dict[str, list[str]]) -> Arrays:
    missing = _planned_missing(info, columns, categories)
    if not missing:
        return columns
    m = len(missing)
    arm_codes = {a: _code(categories, "arm", a) for a in dict.fromkeys(a for a, _, _ in missing)}
    task_codes = {t: _code(categories, "task", t) for t in dict.fromkeys(t for _, t, _ in missing)}
    extra: Arrays = {
        "arm": np.array([arm_codes[a] for a, _, _ in missing], dtype=np.int32),
        "task": np.array([task_codes[t] for _, t, _ in missing], dtype=np.int32),
        "trial": np.array([n for _, _, n in missing], dtype=np.int64),
        "attempt": np.zeros(m, dtype=np.int32),
        "kept": np.zeros(m, dtype=np.bool_),
        "outcome": np.full(m, _code(categories, "outcome", "not_run"), dtype=np.int32),
        "reason": np.full(
            m, _code(categories, "reason", f"no result: run {info.status}"), dtype=np.int32
        ),
        "answer": np.full(m, -1, dtype=np.int32),
        "valid": np.full(m, -1, dtype=np.int8),
        "wall_ms": np.full(m, np.nan),
    }
    return {k: np.concatenate([columns[k], extra[k].astype(columns[k].dtype)]) for k in columns}


def build_index(run_dir: RunDir, info: RunRecord, *, ended: bool) -> TrialIndex:
    """The browser's index of the run at ``run_dir`` (see the module's docstring).

    Raises ``RunDirError`` naming the file and the fix when the run cannot be read.
    """
    stored = _read_npz(run_dir) if ended else None
    in_flight, unrecorded = 0, Counter[str]()
    if stored is not None:
        columns, categories, source = *stored, TABLE_FILE
    else:
        built = _from_journal(run_dir) if run_dir.journal_path.exists() else None
        if built is not None:
            table, in_flight, unrecorded = built
            source = "journal"
        else:  # a run written before the journal carried rows
            kept = [*_records(run_dir, "infra"), *_records(run_dir, "interrupted")]
            table = TrialTable.from_results(_records(run_dir, "results"), kept)
            source = "result files"
        columns = _from_table(table.columns, dict(table.categories))
        categories = {k: list(table.categories[k]) for k in _CATS}
    columns = _with_not_run(info, columns, categories)
    arms = list(dict.fromkeys([*info.arms, *categories["arm"]]))
    tasks = list(dict.fromkeys([*(t.id for t in info.tasks), *categories["task"]]))
    return TrialIndex(
        columns, categories, source, arms, tasks, in_flight, tuple(sorted(unrecorded.items()))
    )
