"""``pairbench plan``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from pairbench._errors import SpecError
from pairbench.cli._app import app, out, user_errors
from pairbench.cli._plan_confirmation import check_options, confirmation
from pairbench.schedule import build_schedule
from pairbench.spec import Experiment, load_experiment

DISCORDANT_SHARES = (0.1, 0.2, 0.3)
RATIOS = (2.0, 3.0, 4.0)
ALPHA = 0.05
TARGET_POWER = 0.8


def _simulated_effect(exp: Experiment, a: str, b: str, pairs: int) -> dict[str, Any] | None:
    """The effect a simulated agent's declared settings imply for arms ``a`` and ``b``.

    A seeded Monte Carlo with the agent's own draw function (`expected_discordance`):
    ``None`` unless both arms run the same ``simulated`` agent spec.
    """
    spec = exp.arm_agent(a)
    if spec.adapter != "simulated" or exp.arm_agent(b) != spec:
        return None
    # numpy, which no other command loads until its report: imported when a plan needs it.
    from pairbench.agents._simulated import expected_discordance

    tasks = [(t.id, exp.trials_for(t)) for t in exp.tasks]
    try:
        found = expected_discordance(spec.settings, a, b, tasks)
    except LookupError as exc:
        raise SpecError([str(exc)]) from None
    ratio = found.ratio
    effect: dict[str, Any] = {
        "a_only_share": round(found.a_only, 4),
        "b_only_share": round(found.b_only, 4),
        "discordant_share": round(found.discordant, 4),
        "ratio": None if ratio is None else round(ratio, 4),
        "draws": found.draws,
        "pairs_needed": None,
        "power_at_schedule": None,
    }
    if ratio is not None and ratio != 1.0 and found.discordant > 0:
        effect["pairs_needed"] = _power().mcnemar_sample_size(
            found.discordant, ratio, ALPHA, TARGET_POWER
        )
        power = _power().mcnemar_power(pairs, found.discordant, ratio, ALPHA)
        effect["power_at_schedule"] = round(power, 4)
    return effect


def _power() -> Any:
    """The power functions, loaded on use (scipy.stats is slow to import)."""
    from pairbench.analysis import _power as module

    return module


def power_data(exp: Experiment, pairs: int) -> dict[str, Any]:
    """Pairs each declared comparison gets, and the pairs a range of effects needs."""
    table = [
        {
            "discordant_share": row.p_discordant,
            "ratio": row.ratio,
            "pairs_needed": row.pairs,
            "power_at_pairs_needed": round(row.exact_power, 4),
            "power_at_schedule": round(
                _power().mcnemar_power(pairs, row.p_discordant, row.ratio), 4
            ),
        }
        for row in _power().power_table(DISCORDANT_SHARES, RATIOS, ALPHA, TARGET_POWER)
    ]
    return {
        "test": "exact McNemar, two-sided, per comparison (before Holm)",
        "alpha": ALPHA,
        "target_power": TARGET_POWER,
        "schedule_pairs": pairs,
        "comparisons": [
            {"arms": [a, b], "pairs": pairs, "simulated": _simulated_effect(exp, a, b, pairs)}
            for a, b in exp.comparisons
        ],
        "table": table,
    }


def plan_data(file: Path, run_seed: int, *, power: bool = False) -> dict[str, Any]:
    loaded = load_experiment(file)
    exp = loaded.experiment
    schedule = build_schedule(exp, run_seed)
    per_trial = exp.budget.cost_per_trial_usd
    projected = None if per_trial is None else round(per_trial * schedule.attempts, 6)
    ceiling = exp.budget.cost_ceiling_usd
    fits = None if projected is None or ceiling is None else projected <= ceiling
    data: dict[str, Any] = {
        "experiment": exp.id,
        "run_seed": run_seed,
        "order_policy": exp.order_policy,
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
    if power:
        # Every pair runs every arm, so each comparison gets all of the schedule's pairs.
        data["power"] = power_data(exp, len(schedule.pairs))
    return data


def _print_power(power: dict[str, Any]) -> None:
    n = power["schedule_pairs"]
    out.print(
        f"Power: {power['test']}, alpha {power['alpha']:g}, target {power['target_power']:g}."
    )
    if not power["comparisons"]:
        out.print("No comparisons declared: no arm pair gets a test.")
    for comp in power["comparisons"]:
        a, b = comp["arms"]
        out.print(f"{a} vs {b}: {comp['pairs']} pairs in this schedule.")
        sim = comp["simulated"]
        if sim is not None:
            shown = "unbounded" if sim["ratio"] is None else f"{sim['ratio']:.2f}"
            needed = "n/a" if sim["pairs_needed"] is None else str(sim["pairs_needed"])
            reached = sim["power_at_schedule"]
            out.print(
                f"  simulated agent implies: discordant share {sim['discordant_share']:.3f} "
                f"({a} only {sim['a_only_share']:.3f}, {b} only {sim['b_only_share']:.3f}), "
                f"ratio {shown}"
            )
            out.print(
                f"  pairs needed {needed}; power with {n} pairs "
                f"{'n/a' if reached is None else f'{reached:.2f}'} "
                f"(seeded Monte Carlo of {sim['draws']} pairs)"
            )
    table = Table(title=f"Pairs needed (power reached with this schedule's {n} pairs)")
    table.add_column("discordant share")
    for ratio in RATIOS:
        table.add_column(f"ratio {ratio:g}")
    for share in DISCORDANT_SHARES:
        cells = [
            f"{r['pairs_needed']} ({r['power_at_schedule']:.2f})"
            for r in power["table"]
            if r["discordant_share"] == share
        ]
        table.add_row(f"{share:g}", *cells)
    out.print(table)


@app.command()
@user_errors
def plan(
    file: Path = typer.Argument(..., help="The experiment.yaml to plan."),
    run_seed: int | None = typer.Option(
        None,
        help="Run seed the schedule is shown for (default 0); with --stage confirmation, the "
        "confirmation run's seed (default: derived from the screening run ID and N).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    power: bool = typer.Option(
        False,
        "--power",
        help="Also print the pairs each declared comparison gets and a table of pairs needed "
        "(exact McNemar, alpha 0.05, power 0.8) with the power this schedule reaches.",
    ),
    stage: str | None = typer.Option(
        None,
        "--stage",
        help="confirmation: plan a confirmation run of a campaign experiment from its "
        "screening run (needs --pairs and --screening).",
    ),
    pairs: int | None = typer.Option(
        None, "--pairs", min=1, help="Campaign pairs the confirmation plan declares."
    ),
    screening: Path | None = typer.Option(
        None, "--screening", help="The completed screening run directory the plan builds on."
    ),
    write: Path | None = typer.Option(
        None, "--write", help="Write the plan to this new file (never overwritten)."
    ),
    wall_budget: float | None = typer.Option(
        None,
        "--wall-budget",
        min=0.01,
        help="With --stage confirmation: hours the confirmation run may take; the plan says "
        "how many pairs fit at the high end of the screening's spread.",
    ),
) -> None:
    """Print the schedule (pairs, seeds, arm order), the projected cost and the ceiling check.

    `pairbench run` draws a fresh run seed unless given `--run-seed`; pass the same seed here
    to see the seeds that run will use.

    With `--power`: a table of pairs needed by discordant share (pairs where exactly one arm
    passes: 0.1, 0.2, 0.3) and ratio (the larger discordant count over the smaller: 2, 3, 4),
    each with the power this schedule's pairs reach. For a `simulated` agent it also gives
    the discordant share and ratio its declared settings imply (a seeded Monte Carlo with
    the agent's own draw function over 4000 seeded pairs).

    With `--stage confirmation` (an experiment with order {block: campaign}): a plan of
    `--pairs N` campaign pairs from the `--screening` run: N, the balanced seeded campaign
    order, the wall-time estimate from the screening campaigns and the run's time around
    them, the observed spread (per scenario, the faster and the slower arm), the bound from
    the trial timeout, the pairs that fit `--wall-budget HOURS`, and the smallest
    attainable p for N. `--write plan.json` stores it for
    `pairbench approve`; `pairbench run --plan plan.json` runs it once approved.

    Example:

        pairbench plan experiment.yaml --run-seed 7 --power --json
        pairbench plan experiment.yaml --stage confirmation --pairs 6 \
            --screening runs/rra-20261129T150000Z-1a2b3c --write plan.json
    """
    if check_options(stage, pairs, screening, write):
        assert pairs is not None and screening is not None  # check_options insists
        confirmation(
            file, pairs, screening, write=write, run_seed=run_seed, as_json=as_json,
            budget_h=wall_budget,
        )  # fmt: skip
        return
    run_seed = 0 if run_seed is None else run_seed
    data = plan_data(file, run_seed, power=power)
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
    if "power" in data:
        _print_power(data["power"])
