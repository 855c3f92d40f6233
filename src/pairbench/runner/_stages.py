"""The stages of a campaign experiment: what a run may be, checked before anything exists.

An experiment with ``order: {block: campaign}`` runs as a **screening** pair (``run
--stage screening``: one campaign pair, its order drawn from the run seed, no p value) or
as a **confirmation** from an approved plan (``run --plan plan.json``: the plan's pairs,
seed and order). Both run one attempt at a time. Every refusal here happens before the
run folder is made, so a refused run leaves nothing behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple

from pairbench._errors import RunRefused
from pairbench.schedule._approval import require_approved
from pairbench.schedule._confirmation import plan_sha256
from pairbench.spec._load import LoadedExperiment
from pairbench.store._run_info import PlanRef

Stage = Literal["screening", "confirmation"]
STAGES: tuple[Stage, ...] = ("screening", "confirmation")


class StagedRun(NamedTuple):
    """How a run is staged: which stage, its seed and pairs' order, and the concurrency."""

    stage: Stage | None
    """None for an experiment without campaign blocks."""
    run_seed: int | None
    """The seed the run must use (a plan's), or None: the usual one."""
    campaign_order: list[list[str]] | None
    """Per campaign pair, its arms' order (a plan's); None: drawn from the run seed."""
    plan: PlanRef | None
    """The approved plan followed, for run.json."""
    concurrency: int | None
    """The concurrency the run uses (1 for campaigns), or None: the usual one."""


def stage_run(
    loaded: LoadedExperiment,
    *,
    stage: str | None,
    plan: Path | None,
    run_seed: int | None,
    concurrency: int | None,
    case_set: str | None = None,
) -> StagedRun:
    """Check a run's stage against the experiment and, for ``plan``, the approved plan.

    **Usage**::

        staged = stage_run(loaded, stage="screening", plan=None, run_seed=None,
                           concurrency=None)
        staged.stage, staged.concurrency   # ('screening', 1)

    Raises:
        RunRefused: a stage for an experiment without campaign blocks, a campaign
            experiment without one, concurrency above 1, or a plan that is unapproved,
            changed after approval, or for another experiment, protocol or task order.
        PlanError: the plan file cannot be read or is inconsistent.
    """
    exp = loaded.experiment
    if stage is not None and stage not in STAGES:
        raise RunRefused(f"unknown stage {stage!r}: use --stage screening (or --plan plan.json)")
    if not exp.campaigns:
        if stage is not None or plan is not None:
            raise RunRefused(
                f"{exp.id} has no campaign blocks, so it has no stages: --stage and --plan are "
                "for an experiment with order: {block: campaign}; run it without them"
            )
        return StagedRun(None, None, None, None, None)
    if concurrency is not None and concurrency != 1:
        raise RunRefused(
            f"--concurrency {concurrency} is refused: {exp.id} runs in campaigns, one attempt "
            "at a time in the recorded order; drop --concurrency"
        )
    if plan is not None:
        if stage == "screening":
            raise RunRefused("a plan is a confirmation: use --plan without --stage screening")
        return _confirmation(loaded, plan, run_seed, case_set)
    if stage == "screening":
        return StagedRun("screening", None, None, None, 1)
    raise RunRefused(
        f"{exp.id} runs in campaigns: start a screening pair with --stage screening, or a "
        "confirmation from an approved plan with --plan plan.json (`pairbench plan --stage "
        "confirmation` writes one)"
    )


def _confirmation(
    loaded: LoadedExperiment, path: Path, run_seed: int | None, case_set: str | None
) -> StagedRun:
    plan = require_approved(path)  # unapproved or edited since: refused here
    exp = loaded.experiment
    fix = "make a new plan for this experiment (`pairbench plan --stage confirmation`)"
    if plan.experiment != exp.id:
        raise RunRefused(f"{path} is a plan for {plan.experiment!r}, not {exp.id!r}; {fix}")
    if plan.protocol_hash != loaded.canonical_hash:
        raise RunRefused(
            f"{path} was planned for protocol hash {plan.protocol_hash}, but {exp.id} now "
            f"hashes to {loaded.canonical_hash} (the experiment changed); {fix}"
        )
    if sorted(plan.arms) != sorted(exp.arms):
        raise RunRefused(f"{path} compares arms {plan.arms}, the experiment has {list(exp.arms)}")
    tasks = [t.id for t in exp.tasks_in(case_set)]
    if plan.scenarios != tasks:
        raise RunRefused(
            f"{path} locks the scenario order {plan.scenarios}, but this run's tasks are "
            f"{tasks}; {fix}"
        )
    if run_seed is not None and run_seed != plan.run_seed:
        raise RunRefused(
            f"--run-seed {run_seed} differs from the plan's run seed {plan.run_seed}: a "
            "confirmation runs with its plan's seed; drop --run-seed"
        )
    approval = plan.approval
    assert approval is not None  # require_approved refuses a plan without one
    ref = PlanRef(
        file=str(path),
        sha256=plan_sha256(plan),
        approval=approval,
        screening_run=plan.screening_run,
        n_pairs=plan.n_pairs,
    )
    return StagedRun("confirmation", plan.run_seed, [list(o) for o in plan.order], ref, 1)
