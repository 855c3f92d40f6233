"""``pairbench approve``."""

from __future__ import annotations

from pathlib import Path

import typer

from pairbench.cli._app import app, out, user_errors
from pairbench.schedule import approve as approve_plan


@app.command()
@user_errors
def approve(
    plan: Path = typer.Argument(..., help="The confirmation plan (plan.json) to approve."),
    by: str = typer.Option(..., "--by", help="Who approves it (recorded in the plan)."),
) -> None:
    """Approve a confirmation plan: record who approved it, when, and its sha256.

    Review the plan first: its pairs, campaign order, wall-time estimate and smallest
    attainable p. A confirmation run then starts only while its sha256 still matches; a plan
    edited after approval is refused, and a plan is approved once.

    Example:

        pairbench approve plan.json --by "Ada Lovelace"
    """
    approved = approve_plan(plan, by)
    approval = approved.approval
    assert approval is not None  # approve() always records one
    out.print(
        f"Approved {plan}: {approved.n_pairs} pairs of {approved.experiment} "
        f"(confirmation of screening run {approved.screening_run}), "
        f"by {approval.by} at {approval.at.isoformat()}"
    )
    out.print(f"  plan sha256 {approval.plan_sha256}")
