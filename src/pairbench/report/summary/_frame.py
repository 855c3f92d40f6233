"""A run's trial table indexed for the summary: arm and task order, final and first attempts.

Everything here is numpy over whole columns, so a summary costs about the same per trial
at a thousand trials as at a million.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.report.summary._common import ordered_unique, timeout_ms
from pairbench.store._records import SCORED_OUTCOMES
from pairbench.store._run_record import RunRecord
from pairbench.store._table import TrialTable

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


def _positions(categories: Sequence[str], order: Sequence[str]) -> Ints:
    """For each category, its index in ``order`` (every category is in it); one extra slot."""
    rank = {name: i for i, name in enumerate(order)}
    return np.array([rank[c] for c in categories] + [0], dtype=np.int64)


def _first_of_groups(sort_keys: Sequence[npt.NDArray[Any]]) -> tuple[Ints, Ints]:
    """``np.lexsort`` order and, in it, where each trial's group starts.

    A group is the rows of one trial: equal in the last three keys (trial, task, arm);
    the keys before them only order rows within it, so the row at each start is the
    group's first by them.
    """
    order = np.lexsort(sort_keys).astype(np.int64)
    starts = np.zeros(len(order), dtype=np.bool_)
    starts[:1] = True
    for key in sort_keys[-3:]:
        k = key[order]
        starts[1:] |= k[1:] != k[:-1]
    return order, np.flatnonzero(starts)


@dataclass(frozen=True)
class Frame:
    """Row indices and per-row arrays the summary sections share."""

    run: RunRecord
    table: TrialTable
    arms: list[str]
    tasks: list[str]
    arm: Ints
    """Per row: index into ``arms`` (declared order first)."""
    task: Ints
    """Per row: index into ``tasks``; sorting by (task, trial) is the report's trial order."""
    trial: Ints
    outcome: list[str]
    """Outcome names by code (the table's categories)."""
    final: Ints
    """Rows that are trials' final records: one per (arm, task, trial), the highest attempt."""
    kept: Ints
    """Rows of attempts kept beside the results (infra, interrupted), in table order."""
    scored: Ints
    """``final`` rows whose outcome enters success denominators."""
    first: Ints
    """Per trial, its first attempt: the earliest kept infra attempt or superseded record (a
    campaign re-run whole), else the final record."""
    limit_ms: float | None

    def mask(self, *outcomes: str) -> Bools:
        """Per row: is its outcome one of ``outcomes``."""
        codes = [self.outcome.index(o) for o in outcomes if o in self.outcome]
        return np.asarray(np.isin(self.table.columns["outcome"], codes))

    def of_arm(self, rows: Ints, arm: int) -> Ints:
        return np.asarray(rows[self.arm[rows] == arm], dtype=np.int64)

    def trial_keys(self, rows: Ints) -> Ints:
        """One integer per row that sorts like (task in report order, trial index)."""
        width = int(self.trial.max(initial=0)) + 1
        return self.task[rows] * width + self.trial[rows]

    def paired(self, a: Ints, b: Ints) -> tuple[Ints, Ints]:
        """Rows of ``a`` and of ``b`` on the same (task, trial), aligned; each side holds at
        most one row per trial (one arm's final rows, say)."""
        keys_a, keys_b = self.trial_keys(a), self.trial_keys(b)
        _, ia, ib = np.intersect1d(keys_a, keys_b, assume_unique=True, return_indices=True)
        return a[ia], b[ib]

    def labels(self) -> dict[str, dict[str, Any]]:
        """Task labels from run.json; for an undeclared task, its first record's labels."""
        out = {t.id: dict(t.labels or {}) for t in self.run.tasks}
        col, cats = self.table.columns["labels"], self.table.categories["labels"]
        names = self.table.categories["task"]
        codes = self.table.columns["task"]
        missing = [i for i, name in enumerate(names) if name not in out]
        for code in missing:
            rows = np.flatnonzero(codes == code)
            text = cats[col[rows[0]]] if col[rows[0]] >= 0 else "{}"
            out[names[code]] = dict(json.loads(text))
        return out


def build_frame(run: RunRecord, table: TrialTable) -> Frame:
    """Index ``table`` for the summary of ``run``."""
    cols = table.columns
    arms = ordered_unique(run.arms, table.categories["arm"])
    declared = (t.id for t in run.tasks)
    tasks = ordered_unique(declared, table.categories["task"])
    arm = _positions(table.categories["arm"], arms)[cols["arm"]]
    task = _positions(table.categories["task"], tasks)[cols["task"]]
    trial = cols["trial"].astype(np.int64)
    index = np.arange(len(table), dtype=np.int64)
    is_kept = cols["kept"]
    outcome = table.categories["outcome"]

    # Final records: per trial the highest attempt (the first of equals), kept in the
    # order each trial first appears.
    rows = index[~is_kept]
    attempt = cols["attempt"][rows]
    order, starts = _first_of_groups((rows, -attempt, trial[rows], task[rows], arm[rows]))
    chosen = rows[order[starts]]
    first_seen, seen_starts = _first_of_groups((rows, trial[rows], task[rows], arm[rows]))
    appear = rows[first_seen[seen_starts]]  # the same groups, in the same (key) order
    final = chosen[np.argsort(appear, kind="stable")]

    kept = index[is_kept]
    scored_codes = [i for i, o in enumerate(outcome) if o in SCORED_OUTCOMES]
    scored = final[np.isin(cols["outcome"][final], scored_codes)]

    # First attempts: a trial with a kept infra attempt started with one (the runner
    # retries only after infra), and one whose campaign was re-run whole started with its
    # superseded record (kept under replaced/, with a scored outcome): the lowest-numbered
    # of those replaces the final.
    infra_code = outcome.index("infra") if "infra" in outcome else -2
    infra = kept[np.isin(cols["outcome"][kept], [infra_code, *scored_codes])]
    order, starts = _first_of_groups(
        (infra, cols["attempt"][infra], trial[infra], task[infra], arm[infra])
    )
    first_infra = infra[order[starts]]
    width = int(trial.max(initial=0)) + 1
    tasks_n = len(tasks) + 1

    def key(r: Ints) -> Ints:
        return np.asarray((arm[r] * tasks_n + task[r]) * width + trial[r], dtype=np.int64)

    replaced = np.isin(key(final), key(first_infra))
    first = np.concatenate([final[~replaced], first_infra])
    return Frame(
        run=run,
        table=table,
        arms=arms,
        tasks=tasks,
        arm=arm,
        task=task,
        trial=trial,
        outcome=outcome,
        final=final,
        kept=kept,
        scored=scored,
        first=first,
        limit_ms=timeout_ms(run),
    )
