"""``pairbench approve``."""

from __future__ import annotations

from pathlib import Path

import typer

from pairbench.cli._app import app, out, user_errors


@app.command()
@user_errors
def approve(
    plan: Path = typer.Argument(..., help="The confirmation plan (plan.json) to approve."),
    by: str = typer.Option(..., "--by", help="Who approves it (recorded in the plan)."),
    experiment: Path = typer.Option(
        ...,
        "--experiment",
        help="The experiment.yaml the plan is for: the approval goes into the ledger beside "
        "its lock.",
    ),
    screening: Path | None = typer.Option(
        None,
        "--screening",
        help="The screening run's folder, when it ran before the freeze (not in the ledger): "
        "the approval binds the model endpoint it ran against.",
    ),
) -> None:
    """Approve a confirmation plan: record who approved it, when, and its sha256.

    Review the plan first: its pairs, campaign order, wall-time estimate and smallest
    attainable p. The approval is appended to the ledger beside the experiment's lock,
    bound to the plan's sha256, the lock, the experiment's canonical hash and the model
    endpoint the screening ran against. The first `run --plan` spends it: a second run of
    the plan is refused from any runs folder, and a plan edited after approval is refused.

    Example:

        pairbench approve plan.json --by "Ada Lovelace" --experiment experiment.yaml
    """
    from pairbench.runner._approve import approve_plan

    approved = approve_plan(experiment, plan, by, screening=screening)
    approval = approved.approval
    assert approval is not None  # approve() always records one
    out.print(
        f"Approved {plan}: {approved.n_pairs} pairs of {approved.experiment} "
        f"(confirmation of screening run {approved.screening_run}), "
        f"by {approval.by} at {approval.at.isoformat()}"
    )
    out.print(f"  plan sha256 {approval.plan_sha256}")
