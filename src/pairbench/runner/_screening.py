"""From a screening run to a confirmation plan: its durations, checked, and the plan.

The screening pair is the only evidence a confirmation plan may use before it runs: its
campaigns' wall time gives the estimate, the trial timeout the worst case. The plan is
built by ``schedule.build_confirmation_plan``; this module only reads and checks the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from pairbench.schedule._approval import PlanError
from pairbench.schedule._confirmation import ConfirmationPlan, build_confirmation_plan
from pairbench.schedule._seeds import derive_run_seed
from pairbench.spec._load import LoadedExperiment
from pairbench.store._load_run import load_run
from pairbench.store._records import TrialResult


class Screening(NamedTuple):
    """What a completed screening run tells a plan."""

    run_id: str
    scenarios: list[str]
    """The tasks it ran, in the order every campaign ran them."""
    arms: list[str]
    """The two arms, in declared order."""
    campaign_s: dict[str, float]
    """Per arm, its campaign's wall seconds: every attempt's ``wall_ms``, kept ones too."""
    estimated_attempts: int
    """Attempts without a measured ``wall_ms``, counted at the trial timeout instead."""
    scenario_s: dict[str, list[float]]
    """Per scenario, each arm's seconds on it (its attempts' ``wall_ms``, kept ones too)."""
    overhead_campaign_s: float | None
    """The run's wall time outside its attempts, per campaign (None: not recorded)."""

    @property
    def mean_campaign_s(self) -> float:
        """The mean of the arms' campaign seconds: the plan's basis per campaign."""
        return sum(self.campaign_s.values()) / len(self.campaign_s)


def _seconds(attempts: Sequence[TrialResult], timeout_s: float) -> tuple[float, int]:
    total, unmeasured = 0.0, 0
    for attempt in attempts:
        wall = attempt.metrics.wall_ms.value if attempt.metrics is not None else None
        if wall is None:
            unmeasured += 1
            total += timeout_s  # unknown: the bound, so the estimate never undercounts
        else:
            total += wall / 1000.0
    return total, unmeasured


def read_screening(loaded: LoadedExperiment, run_dir: Path) -> Screening:
    """The completed screening run in ``run_dir`` of ``loaded``'s experiment, as it is now.

    **Usage**::

        screening = read_screening(loaded, Path("runs/rra-20261129T150000Z-1a2b3c"))
        screening.campaign_s   # {'baseline': 512.3, 'candidate': 498.0}

    Raises:
        PlanError: not a screening run, not complete, of another experiment, or of a
            protocol whose canonical hash differs from the experiment's now.
        RunDirError: ``run_dir`` is not a readable run.
    """
    run = load_run(run_dir)
    info, exp = run.info, loaded.experiment
    fix = "run a new screening: pairbench run EXPERIMENT --stage screening"
    if info.stage != "screening":
        what = f"a {info.stage} run" if info.stage else "not a screening run"
        raise PlanError(f"{run_dir} is {what}: a confirmation plan builds on a screening; {fix}")
    if info.experiment.id != exp.id:
        raise PlanError(f"{run_dir} screened {info.experiment.id!r}, not {exp.id!r}; {fix}")
    if info.canonical_hash != loaded.canonical_hash:
        raise PlanError(
            f"{run_dir} screened protocol hash {info.canonical_hash}, but {exp.id} now hashes "
            f"to {loaded.canonical_hash} (the experiment changed since); {fix}"
        )
    if info.status != "complete":
        raise PlanError(f"{run_dir} is {info.status}, not complete; {fix}")
    timeout_s = exp.budget.trial_timeout_s
    arms = list(info.arms)
    campaign_s: dict[str, float] = {}
    unmeasured = 0
    every = [*run.results, *run.infra, *run.interrupted]
    for arm in arms:
        seconds, missing = _seconds([r for r in every if r.arm == arm], timeout_s)
        campaign_s[arm] = round(seconds, 3)
        unmeasured += missing
    tasks = [t.id for t in info.tasks]
    scenario_s = {
        task: [
            round(_seconds([r for r in every if r.arm == arm and r.task == task], timeout_s)[0], 3)
            for arm in arms
        ]
        for task in tasks
    }
    overhead = None
    wall = _wall_s(info.started_at, info.ended_at)
    if wall is not None and arms:
        overhead = round(max(0.0, wall - sum(campaign_s.values())) / len(arms), 3)
    return Screening(info.run_id, tasks, arms, campaign_s, unmeasured, scenario_s, overhead)


def _wall_s(started: str | None, ended: str | None) -> float | None:
    """Seconds between two ISO times (None when either is missing or unreadable)."""
    if not started or not ended:
        return None
    try:
        return (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()
    except ValueError:
        return None


class Proposal(NamedTuple):
    """A confirmation plan and the screening it was estimated from."""

    plan: ConfirmationPlan
    screening: Screening


def default_plan_seed(screening_run: str, n_pairs: int) -> int:
    """The plan's run seed when none is given: ``derive_run_seed(f"{run}|confirmation|{n}")``.

    Fixed by the screening run and N, so re-making the same plan gives the same order.

    >>> default_plan_seed("rra-20261129T150000Z-1a2b3c", 6) == default_plan_seed(
    ...     "rra-20261129T150000Z-1a2b3c", 6)
    True
    """
    return derive_run_seed(f"{screening_run}|confirmation|{n_pairs}")


def plan_confirmation(
    loaded: LoadedExperiment,
    screening_dir: Path,
    n_pairs: int,
    *,
    run_seed: int | None = None,
    created_at: datetime | None = None,
    budget_s: float | None = None,
) -> Proposal:
    """A confirmation plan of ``n_pairs`` campaign pairs from a completed screening run.

    **Usage**::

        plan, screening = plan_confirmation(loaded, Path("runs/rra-...-1a2b3c"), 6)
        write_plan(Path("plan.json"), plan)   # then `pairbench approve plan.json --by NAME`

    Raises:
        PlanError: the run cannot be a basis (``read_screening``), the experiment has no
            campaign blocks, or ``n_pairs`` is below 1.
    """
    exp = loaded.experiment
    if not exp.campaigns:
        raise PlanError(
            f"{exp.id} has no campaign blocks: confirmation plans are for an experiment with "
            "order: {block: campaign}"
        )
    if n_pairs < 1:
        raise PlanError(f"--pairs must be at least 1, got {n_pairs}")
    screening = read_screening(loaded, screening_dir)
    seed = default_plan_seed(screening.run_id, n_pairs) if run_seed is None else run_seed
    plan = build_confirmation_plan(
        experiment=exp.id,
        protocol_hash=loaded.canonical_hash,
        screening_run=screening.run_id,
        n_pairs=n_pairs,
        run_seed=seed,
        scenarios=screening.scenarios,
        screening_campaign_s=screening.mean_campaign_s,
        trial_timeout_s=exp.budget.trial_timeout_s,
        arms=screening.arms,
        created_at=created_at,
        overhead_campaign_s=screening.overhead_campaign_s,
        scenario_s=screening.scenario_s,
        budget_s=budget_s,
    )
    return Proposal(plan, screening)
