"""The ``not_run`` rows ``load_table`` adds: one per planned (arm, task, trial) that has no
final result, matched as integer codes. Pinned against the plain set-of-tuples reading of
the same rule on random plans and tables, and a schedule that is not one fails loudly."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from pairbench import RunDirError
from pairbench.store._events import TrialRow
from pairbench.store._load_table import _not_run, _not_run_rows
from pairbench.store._table import TrialTable


def _row(arm: str, task: str, trial: int, kept: bool) -> TrialRow:
    return TrialRow.model_validate(
        {"arm": arm, "task": task, "trial": trial, "attempt": 1, "kept": kept,
         "outcome": "infra" if kept else "success", "start_order": 0, "reason": "",
         "labels": "{}"}
    )  # fmt: skip


def _info(tasks: list[str]) -> Any:
    return SimpleNamespace(
        status="stopped", tasks=[SimpleNamespace(id=t, labels=None) for t in tasks]
    )


def _reference(schedule: dict[str, Any], rows: list[TrialRow]) -> list[tuple[str, str, int, int]]:
    """The rule as written before the codes: a set of what has a final result."""
    have = {(r.arm, r.task, r.trial) for r in rows if not r.kept}
    return [
        (arm, str(p["task"]), int(p["trial"]), position)
        for p in schedule["pairs"]
        for position, arm in enumerate(p["order"])
        if (arm, str(p["task"]), int(p["trial"])) not in have
    ]


@pytest.mark.parametrize("seed", range(40))
def test_the_rows_are_what_the_plain_rule_gives(seed: int) -> None:
    rng = np.random.default_rng(seed)
    arms, tasks = (
        ["a", "b", "c"][: rng.integers(1, 4)],
        [f"t{i}" for i in range(rng.integers(1, 5))],
    )
    # The plan may name a task, an arm or a trial the table never saw, and the table may
    # hold kept (retried) rows and rows outside the plan.
    plan_tasks, plan_arms = [*tasks, "unseen"], [*arms, "zz"]
    pairs = [
        {"task": str(rng.choice(plan_tasks)), "trial": int(rng.integers(0, 7)),
         "order": [str(a) for a in rng.permutation(plan_arms)[: rng.integers(1, 5)]]}
        for _ in range(rng.integers(0, 26))
    ]  # fmt: skip
    rows = [
        _row(
            str(rng.choice(arms)),
            str(rng.choice(tasks)),
            int(rng.integers(0, 5)),
            bool(rng.random() < 0.2),
        )
        for _ in range(rng.integers(0, 31))
    ]
    schedule = {"pairs": pairs}
    table = TrialTable.from_rows(rows)
    got = [
        (r.arm, r.task, r.trial, r.start_order)
        for r in _not_run_rows(_info(tasks), schedule, table)
    ]
    assert got == _reference(schedule, rows)
    assert all(r.outcome == "not_run" and r.reason == "no result: run stopped"
               for r in _not_run_rows(_info(tasks), schedule, table))  # fmt: skip


def test_an_empty_table_leaves_every_planned_arm_not_run() -> None:
    schedule = {"pairs": [{"task": "t0", "trial": 0, "order": ["b", "a"]}]}
    got = _not_run_rows(_info(["t0"]), schedule, TrialTable.from_rows([]))
    assert [(r.arm, r.start_order) for r in got] == [("b", 0), ("a", 1)]


@pytest.mark.parametrize(
    ("pair", "says"),
    [
        ({"trial": 0, "order": ["a"]}, "a pair has no 'task'"),
        ({"task": "t0", "trial": "zero", "order": ["a"]}, "invalid literal"),
        ({"task": "t0", "trial": 0, "order": 5}, "not iterable"),
    ],
)
def test_a_schedule_that_is_not_one_is_refused_naming_run_json(
    tmp_path: Path, pair: dict[str, Any], says: str
) -> None:
    run_dir = SimpleNamespace(run_json=tmp_path / "run.json")
    info = _info(["t0"])
    info.schedule = {"pairs": [pair]}
    with pytest.raises(RunDirError) as caught:
        _not_run(run_dir, info, TrialTable.from_rows([_row("a", "t0", 0, False)]))  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'run.json'}: the schedule is not a pairbench schedule")
    assert says in message and "Fix: restore it from a backup" in message
