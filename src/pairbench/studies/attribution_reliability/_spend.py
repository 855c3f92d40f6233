"""What counts against the ceiling: earlier calibration runs, and the held-out run's refusal.

The protocol's ceiling holds calibration included. So before a run of the study's
experiment starts (``Study.before_run``), the calibration runs beside it (the same runs
folder, the same experiment id, run from the same experiment file) are counted as spend
before it, beside any declared ``budget.prior_spend_usd`` (spend made elsewhere), and the
largest cost a session of theirs had beyond its declared worst case raises the new run's
reservations from its first session. A held-out run is refused, before anything is made,
when the projection from the latest calibration run (``plan``'s computation) with that
spend passes the ceiling.

**Usage**::

    counted = counted_runs(runs_dir, loaded)       # [RunSpend(run_id=..., usd=6.0, ...)]
    STUDY.before_run(RunStart(loaded, runs_dir, "held-out"))   # PriorSpend, or it refuses
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any

from pydantic import Field

from pairbench._errors import PairbenchError
from pairbench._model import Frozen
from pairbench.spec._load import LoadedExperiment
from pairbench.store._records import SCORED_OUTCOMES
from pairbench.store._run_info import PriorSpend
from pairbench.store._run_record import RunRecord
from pairbench.studies import RunStart

WORST_CASE_ESTIMATOR = "the declared worst case"
"""How the adapter names a cost it charged because the engine reported none."""


class ProjectionOverCeiling(PairbenchError):
    exit_code = 1


class Overshoot(Frozen):
    """A session that cost more than its declared worst case (``cost_per_trial_usd``)."""

    task: str
    trial: int
    attempt: int
    cost_usd: float
    declared_usd: float


class RunSpend(Frozen):
    """One run's spend as its stored records add it up (final, infra and interrupted)."""

    run_id: str
    case_set: str | None
    usd: float
    sessions: int
    """Records that ran (every attempt but ``not_run``)."""
    charged: int = 0
    """Sessions charged their declared worst case: the engine declares a model but reported
    no cost, or the session recorded none."""
    overshoots: list[Overshoot] = Field(default_factory=list)

    def line(self) -> str:
        charged = f", {self.charged} charged their worst case" if self.charged else ""
        kind = self.case_set or "every task"
        return f"{self.run_id} ({kind}): ${self.usd:.4f} over {self.sessions} session(s){charged}"


def _declared(experiment: dict[str, Any], task: str) -> float | None:
    """The task's declared worst case, else the budget's (as the runner reserves it)."""
    for entry in experiment.get("tasks") or []:
        if isinstance(entry, dict) and entry.get("id") == task:
            own = entry.get("cost_per_trial_usd")
            if own is not None:
                return float(own)
    budget = experiment.get("budget") or {}
    value = budget.get("cost_per_trial_usd") if isinstance(budget, dict) else None
    return None if value is None else float(value)


def run_spend(run_dir: Path, info: RunRecord) -> RunSpend:
    """The run's spend: every stored record's cost; a record that ran to a scored outcome
    with no cost is charged its declared worst case, as the runner charged it."""
    experiment = info.experiment_model or {}
    costs: list[float] = []
    sessions = charged = 0
    overshoots: list[Overshoot] = []
    for folder in ("results", "infra", "interrupted"):
        root = run_dir / folder
        for file in sorted(root.rglob("*.json")) if root.is_dir() else []:
            record = json.loads(file.read_bytes())
            if record.get("outcome") == "not_run":
                continue
            sessions += 1
            task = str(record.get("task"))
            declared = _declared(experiment, task)
            cost = ((record.get("metrics") or {}).get("cost_usd") or {}).get("value")
            if cost is None:
                if record.get("outcome") in SCORED_OUTCOMES and declared is not None:
                    costs.append(declared)
                    charged += 1
                continue
            costs.append(float(cost))
            estimator = str((record.get("metrics") or {}).get("cost_usd", {}).get("estimator"))
            charged += estimator.startswith(WORST_CASE_ESTIMATOR)
            if declared is not None and float(cost) > declared:
                overshoots.append(
                    Overshoot(
                        task=task, trial=int(record.get("trial") or 0),
                        attempt=int(record.get("attempt") or 1), cost_usd=float(cost),
                        declared_usd=declared,
                    )
                )  # fmt: skip
    return RunSpend(
        run_id=info.run_id,
        case_set=info.case_set,
        usd=math.fsum(costs),
        sessions=sessions,
        charged=charged,
        overshoots=overshoots,
    )


class SpendAccount(Frozen):
    """Everything a run counted against its ceiling (the report's "Spend" paragraph)."""

    ceiling_usd: float | None
    declared_prior_usd: float
    """``budget.prior_spend_usd``: spend made elsewhere, as declared."""
    counted_usd: float
    """Earlier calibration runs' spend, counted when the run started."""
    counted: list[str]
    """Those runs, one line each (id, case set, spend, sessions)."""
    this_run: RunSpend
    total_usd: float


def spend_account(run_dir: Path, info: RunRecord) -> SpendAccount:
    """The run's account: its own spend, and what it counted before it (run.json)."""
    budget = (info.experiment_model or {}).get("budget") or {}
    declared = float(budget.get("prior_spend_usd") or 0.0)
    prior = info.prior_spend
    counted = prior.usd if prior is not None else 0.0
    own = run_spend(run_dir, info)
    ceiling = budget.get("cost_ceiling_usd")
    return SpendAccount(
        ceiling_usd=None if ceiling is None else float(ceiling),
        declared_prior_usd=declared,
        counted_usd=counted,
        counted=list(prior.sources) if prior is not None else [],
        this_run=own,
        total_usd=math.fsum([declared, counted, own.usd]),
    )


def _same_file(stored: str | None, path: Path) -> bool:
    if not stored:
        return False
    with contextlib.suppress(OSError):
        return Path(stored).resolve().samefile(path)
    return False


def calibration_runs(runs_dir: Path, loaded: LoadedExperiment) -> list[tuple[Path, RunRecord]]:
    """The runs of this experiment in ``runs_dir`` that are not held-out runs, oldest first:
    same experiment id, run from the same experiment file."""
    from pairbench.store._load_run import read_run_info
    from pairbench.store._run_dir import RunDir

    found: list[tuple[Path, RunRecord]] = []
    for info_path in sorted(runs_dir.glob("*/run.json")) if runs_dir.is_dir() else []:
        try:
            info = read_run_info(RunDir(info_path.parent))
        except (PairbenchError, ValueError, OSError):
            continue  # not a run's run.json: verify names it, it holds no spend we can read
        if info.experiment.id != loaded.experiment.id or info.case_set == "held-out":
            continue
        if _same_file(info.experiment_file, loaded.path):
            found.append((info_path.parent, info))
    return sorted(found, key=lambda f: (f[1].started_at or "", f[1].run_id))


def counted_runs(runs_dir: Path, loaded: LoadedExperiment) -> list[RunSpend]:
    return [run_spend(path, info) for path, info in calibration_runs(runs_dir, loaded)]


def before_run(start: RunStart) -> PriorSpend | None:
    """``Study.before_run``: earlier calibration runs' spend, counted against this run's
    ceiling; a held-out run whose projection from calibration passes it is refused."""
    loaded: LoadedExperiment = start.loaded
    runs = calibration_runs(start.runs_dir, loaded)
    spends = [run_spend(path, info) for path, info in runs]
    counted = math.fsum(s.usd for s in spends)
    seen = [o.cost_usd for s in spends for o in s.overshoots]
    budget = loaded.experiment.budget
    if start.case_set == "held-out" and runs and budget.cost_ceiling_usd is not None:
        _refuse_over_ceiling(loaded, [path for path, _ in runs], counted, budget.prior_spend_usd)
    if not spends:
        return None
    return PriorSpend(
        usd=counted, sources=[s.line() for s in spends], overshoot_usd=max(seen, default=None)
    )


def _refuse_over_ceiling(
    loaded: LoadedExperiment, runs: list[Path], counted: float, declared: float
) -> None:
    """Refuse on the projection from the latest calibration run with a costed session (a
    later run the ceiling stopped before any session projects nothing)."""
    from pairbench.studies.attribution_reliability._cost import (
        partial_inputs,
        project,
        session_counts,
    )
    from pairbench.studies.attribution_reliability._manifest import load_cases, load_packages

    cases, packages = load_cases(), load_packages()
    found = ((run, partial_inputs(run, cases)) for run in reversed(runs))
    latest, inputs = next(((r, i) for r, i in found if i is not None), (None, None))
    if inputs is None:
        return  # nothing was spent to project from (every session not run or model-free)
    ceiling = loaded.experiment.budget.cost_ceiling_usd
    projection = project(inputs, session_counts(loaded.experiment, cases, packages), ceiling)
    before = math.fsum([counted, declared])
    total = math.fsum([projection.worst_usd, before])
    if ceiling is not None and total > ceiling:
        raise ProjectionOverCeiling(
            f"{loaded.path}: refused before any session: the held-out run's worst case "
            f"${projection.worst_usd:.2f} (projected from {inputs.source}: every end-to-end "
            f"session at ${projection.e2e_worst_per_session:g}, every package at "
            f"${projection.package_worst_per_session:g}) plus ${before:.2f} spent before it "
            f"(calibration runs ${counted:.2f}, budget.prior_spend_usd ${declared:.2f}) is "
            f"${total:.2f}, past the ceiling ${ceiling:.2f}. Fix: an engine that costs less, "
            "fewer sessions, or a higher ceiling in the protocol (a new pre-registration); "
            "`pairbench study attribution-reliability plan --calibration "
            f"{latest}` shows the projection"
        )


__all__ = [
    "Overshoot",
    "RunSpend",
    "SpendAccount",
    "before_run",
    "calibration_runs",
    "counted_runs",
    "run_spend",
    "spend_account",
]
