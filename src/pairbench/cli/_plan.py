"""``pairbench plan``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from pairbench.cli._app import app, out, user_errors
from pairbench.schedule import build_schedule
from pairbench.spec import load_experiment


def plan_data(file: Path, run_seed: int) -> dict[str, Any]:
    loaded = load_experiment(file)
    exp = loaded.experiment
    schedule = build_schedule(exp, run_seed)
    per_trial = exp.budget.cost_per_trial_usd
    projected = None if per_trial is None else round(per_trial * schedule.attempts, 6)
    ceiling = exp.budget.cost_ceiling_usd
    fits = None if projected is None or ceiling is None else projected <= ceiling
    return {
        "experiment": exp.id,
        "run_seed": run_seed,
        "order_policy": exp.order,
        "arms": list(exp.arms),
        "pairs": len(schedule.pairs),
        "planned_trials": schedule.attempts,
        "cost": {
            "per_trial_estimate_usd": per_trial,
            "projected_usd": projected,
            "ceiling_usd": ceiling,
            "fits_ceiling": fits,
        },
        "schedule": [p.model_dump(mode="json") for p in schedule.pairs],
    }


@app.command()
@user_errors
def plan(
    file: Path = typer.Argument(..., help="The experiment.yaml to plan."),
    run_seed: int = typer.Option(0, help="Run seed the schedule is shown for."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
) -> None:
    """Print the schedule (pairs, seeds, arm order), the projected cost and the ceiling check.

    `pairbench run` draws a fresh run seed unless given `--run-seed`; pass the same seed here
    to see the seeds that run will use.

    Example:

        pairbench plan experiment.yaml --run-seed 7 --json
    """
    data = plan_data(file, run_seed)
    if as_json:
        out.print_json(json.dumps(data))
        return
    table = Table(
        title=f"{data['experiment']}: {data['planned_trials']} trials "
        f"in {data['pairs']} pairs (run seed {run_seed}, order {data['order_policy']})"
    )
    for column in ("pair", "task", "trial", "seed", "model seed", "arm order"):
        table.add_column(column)
    for pair in data["schedule"]:
        table.add_row(
            str(pair["index"]),
            pair["task"],
            str(pair["trial"]),
            str(pair["seed"]),
            str(pair["model_seed"]),
            " → ".join(pair["order"]),
        )
    out.print(table)
    cost = data["cost"]
    if cost["projected_usd"] is None:
        out.print("Projected cost: no per-trial estimate (budget.cost_per_trial_usd) declared.")
    else:
        verdict = {True: "fits", False: "EXCEEDS", None: "no ceiling declared"}[
            cost["fits_ceiling"]
        ]
        out.print(
            f"Projected cost: ${cost['projected_usd']:.2f} "
            f"(ceiling {cost['ceiling_usd']}): {verdict}"
        )
