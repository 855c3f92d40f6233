"""Reading a run back: its plan, every final result, and every kept attempt."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pairbench.schedule._plan import Schedule
from pairbench.store._records import TrialResult
from pairbench.store._run_dir import RunDir


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
    """
    run_dir = RunDir.open(path)
    info = run_dir.read_run_json()
    stored = run_dir.results()
    have = {(r.arm, r.task, r.trial) for r in stored}
    missing: list[TrialResult] = []
    schedule = Schedule.model_validate(info["schedule"]) if "schedule" in info else None
    status = str(info.get("status", "unknown"))
    labels = {t["id"]: t.get("labels", {}) for t in info.get("tasks", [])}
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
                    agent=str(agents.get(arm, {}).get("adapter", "")),
                )
            )
    return LoadedRun(
        run_dir=run_dir,
        info=info,
        results=stored + missing,
        infra=run_dir.infra_attempts(),
        interrupted=run_dir.interrupted_attempts(),
    )
