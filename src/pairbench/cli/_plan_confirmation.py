"""``pairbench plan --stage confirmation``: a confirmation plan from a screening run."""

from __future__ import annotations

from pathlib import Path

from pairbench.cli._app import err, out
from pairbench.runner._screening import Proposal, plan_confirmation
from pairbench.schedule._approval import PlanError, write_plan
from pairbench.spec._load import load_experiment

ALPHA = 0.05


def _duration(seconds: float) -> str:
    """``1 h 04 min 05 s``-style text for a number of seconds (a tenth below a minute).

    >>> _duration(3845.2), _duration(75), _duration(0.34)
    ('1 h 04 min 05 s', '1 min 15 s', '0.3 s')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min {secs:02d} s"
    return f"{minutes} min {secs:02d} s"


def check_options(
    stage: str | None, pairs: int | None, screening: Path | None, write: Path | None
) -> bool:
    """Whether the options ask for a confirmation plan; refuse a partial or wrong mix."""
    if stage is None:
        if pairs is not None or screening is not None or write is not None:
            raise PlanError(
                "--pairs, --screening and --write make a confirmation plan: add "
                "--stage confirmation"
            )
        return False
    if stage != "confirmation":
        raise PlanError(
            f"plan --stage {stage!r}: only a confirmation is planned (a screening pair runs "
            "with `pairbench run EXPERIMENT --stage screening`)"
        )
    if pairs is None or screening is None:
        raise PlanError(
            "a confirmation plan needs --pairs N and --screening RUN_DIR (a completed "
            "screening run of this experiment)"
        )
    return True


def confirmation(
    file: Path,
    pairs: int,
    screening: Path,
    *,
    write: Path | None,
    run_seed: int | None,
    as_json: bool,
    budget_h: float | None = None,
) -> None:
    """Build, print and (with ``write``) store a confirmation plan."""
    budget_s = None if budget_h is None else budget_h * 3600.0
    proposal = plan_confirmation(
        load_experiment(file), screening, pairs, run_seed=run_seed, budget_s=budget_s
    )
    sha = write_plan(write, proposal.plan) if write is not None else None
    if as_json:
        out.print_json(proposal.plan.model_dump_json())
    else:
        _print(proposal)
    if write is not None:
        to = err if as_json else out  # --json keeps stdout one JSON document
        to.print(f"Wrote {write} (plan sha256 {sha}).")
        to.print(
            f"Review it, then approve it: pairbench approve {write} --by NAME --experiment {file}"
        )


def _print(proposal: Proposal) -> None:
    plan, screening = proposal
    wall = plan.wall_time
    out.print(
        f"Confirmation plan for {plan.experiment}: {plan.n_pairs} campaign pairs "
        f"(run seed {plan.run_seed}), from screening run {plan.screening_run}"
    )
    out.print(f"Scenario order, identical for every campaign: {', '.join(plan.scenarios)}")
    leads = [pair[0] for pair in plan.order]
    counts = ", ".join(f"{arm} first in {leads.count(arm)}" for arm in plan.arms)
    out.print(f"Campaign order, recorded before the first attempt ({counts}):")
    for k, pair in enumerate(plan.order):
        out.print(f"  pair {k}: {' → '.join(pair)}")
    per_arm = ", ".join(f"{arm} {_duration(s)}" for arm, s in screening.campaign_s.items())
    out.print(f"Screening campaigns took {per_arm}.")
    if screening.estimated_attempts:
        out.print(
            f"  ({screening.estimated_attempts} attempt(s) had no measured wall time and "
            "count at the trial timeout.)"
        )
    overhead = wall.overhead_campaign_s or 0.0
    out.print(
        f"Wall time: about {_duration(wall.estimate_s)} (a screening campaign's "
        f"{_duration(wall.screening_campaign_s)} in attempts + {_duration(overhead)} around "
        f"them, × 2 arms × {plan.n_pairs} pairs); at most {_duration(wall.upper_bound_s)} "
        f"(every scenario at its {wall.trial_timeout_s:g} s limit)."
    )
    if wall.low_s is not None and wall.high_s is not None:
        out.print(
            f"  Observed spread: {_duration(wall.low_s)} to {_duration(wall.high_s)} (every "
            "campaign as fast, or as slow, as the faster or slower arm was on each scenario)."
        )
    if wall.budget_s is not None:
        out.print(
            f"  A budget of {_duration(wall.budget_s)} fits {wall.pairs_in_budget} pair(s) at "
            "the spread's high end."
        )
    p = plan.smallest_attainable_p
    out.print(f"Smallest attainable p (exact sign flip over {plan.n_pairs} pairs): {p:g}")
    if p >= ALPHA:
        needed = next(n for n in range(1, 64) if 2.0 / 2**n < ALPHA)
        out.print(
            f"With {plan.n_pairs} pairs no result can reach p < {ALPHA:g}: these pairs "
            f"estimate variance but cannot show superiority at {ALPHA:g}, which needs at "
            f"least {needed} pairs."
        )
