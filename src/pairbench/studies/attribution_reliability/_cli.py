"""``pairbench study attribution-reliability ...`` (``Study.cli``): ``plan``, the held-out
run's cost projection; ``check-engine``, an arm's engine against the contract."""

from __future__ import annotations

from pathlib import Path

import typer

from pairbench._errors import PairbenchError
from pairbench.cli._app import out, user_errors


class OverCeiling(PairbenchError):
    exit_code = 1


class NotConformant(PairbenchError):
    exit_code = 1


def plan_cmd(
    calibration: Path | None = typer.Option(
        None, help="The calibration run folder whose per-session costs the projection uses."
    ),
    protocol_figures: bool = typer.Option(
        False, "--protocol-figures", help="Use the protocol's printed (rounded) figures (§12)."
    ),
    experiment: Path | None = typer.Option(
        None, help="The experiment (default: the study's own) whose schedule gives the counts."
    ),
    ceiling: float | None = typer.Option(
        None, help="Hard ceiling in USD, calibration included (default: the experiment's)."
    ),
) -> None:
    """Project the held-out run's expected and worst-case spend from calibration, and refuse
    (exit 1) when calibration + worst case passes the ceiling.

    Sessions per kind come from the experiment's held-out tasks and trials. The worst case is
    every end-to-end session at calibration's end-to-end maximum and every package at twice
    the package maximum; declare those as the tasks' ``cost_per_trial_usd``. A held-out run
    refuses to start on this same projection, and counts the calibration runs beside it (the
    same runs folder and experiment file) into its spend by itself: declare
    ``budget.prior_spend_usd`` only for spend made elsewhere.

    Example:

        pairbench study attribution-reliability plan --protocol-figures
        pairbench study attribution-reliability plan --calibration runs/ar-20261203T...
    """
    from pairbench.spec import load_experiment
    from pairbench.studies.attribution_reliability._cost import (
        PROTOCOL_INPUTS,
        inputs_from_run,
        project,
        projection_lines,
        session_counts,
    )
    from pairbench.studies.attribution_reliability._manifest import load_cases, load_packages

    if (calibration is None) == (not protocol_figures):
        raise PairbenchError(
            "give --calibration RUN_DIR (a calibration run's costs) or --protocol-figures"
        )
    from pairbench.studies.attribution_reliability import STUDY

    loaded = load_experiment(experiment or STUDY.experiment_path)
    cases, packages = load_cases(), load_packages()
    counts = session_counts(loaded.experiment, cases, packages)
    inputs = PROTOCOL_INPUTS if calibration is None else inputs_from_run(calibration, cases)
    limit = ceiling if ceiling is not None else loaded.experiment.budget.cost_ceiling_usd
    projection = project(inputs, counts, limit)
    for line in projection_lines(projection):
        out.print(line, markup=False, highlight=False)
    out.print(
        f"declare: tasks' cost_per_trial_usd {projection.e2e_worst_per_session:g} (end-to-end) "
        f"and {projection.package_worst_per_session:g} (packages); the run counts calibration "
        "runs beside it by itself (budget.prior_spend_usd: only spend made elsewhere)",
        markup=False,
        highlight=False,
    )
    if not projection.within_ceiling:
        raise OverCeiling(
            f"the worst case with calibration, ${projection.worst_with_calibration_usd:.2f}, "
            f"passes the ceiling ${limit:.2f}. Fix: lower the budgets or the sessions, or "
            "raise the ceiling in the protocol (a new pre-registration)"
        )


def check_engine_cmd(
    experiment: Path = typer.Argument(..., help="The experiment.yaml whose arms name engines."),
    arm: list[str] = typer.Option(
        [], "--arm", help="The arm whose engine to check (repeatable; default: every arm)."
    ),
    timeout: float | None = typer.Option(
        None, help="Seconds per call (default: the engine's timeout_s, else 190 s)."
    ),
) -> None:
    """Run each arm's engine on two calibration cases (C-P01, C-T01: real sites, served as a
    run serves them, ``sites`` settings included) and list every way it breaks the engine
    contract (docs/engines.md), each with its fix; exit 0 when it keeps it, 1 otherwise.

    Calibration cases only: nothing of the held-out set is shown to the engine.

    Example:

        pairbench study attribution-reliability check-engine ar/experiment.yaml --arm mine
    """
    import os

    from pairbench.spec import load_experiment
    from pairbench.studies.attribution_reliability._agent import AttributionSettings
    from pairbench.studies.attribution_reliability._conformance import check_engine, summary
    from pairbench.studies.attribution_reliability.engines import EngineSpec

    loaded = load_experiment(experiment)
    exp = loaded.experiment
    chosen = arm or list(exp.arms)
    unknown = [a for a in chosen if a not in exp.arms]
    if unknown:
        raise PairbenchError(
            f"{experiment}: no arm named {', '.join(unknown)} (arms: {', '.join(exp.arms)}). "
            "Fix: --arm NAME with one of those"
        )
    failing = 0
    for name in chosen:
        agent = exp.arm_agent(name)
        if agent.adapter != "attribution-engine":
            raise PairbenchError(
                f"{experiment}: arm {name} runs the {agent.adapter!r} adapter, not "
                "attribution-engine. Fix: --arm with an arm of this study"
            )
        settings = AttributionSettings.parse(dict(agent.settings))
        spec = EngineSpec.parse(settings.engine).resolve(loaded.root)
        _say(f"arm {name} ({spec.engine} engine):")
        try:
            binding = settings.sites.resolved(os.environ)
        except PairbenchError as exc:
            failing += 1
            _say(f"  {exc}")
            continue
        for check in check_engine(spec, binding=binding, env=os.environ, timeout_s=timeout):
            for problem in check.problems:
                _say(f"  {problem}")
            if check.problems:
                failing += len(check.problems)
            else:
                facts = summary(check)
                _say(
                    f"  {check.case}: ok ({facts['findings']} finding(s), "
                    f"{facts['set_aside']} set aside, {facts['pages_opened']} page request(s))"
                )
    if failing:
        raise NotConformant(
            f"{failing} contract problem(s). The contract: docs/engines.md; the schemas: "
            "src/pairbench/studies/attribution_reliability/engines/schema/"
        )
    _say("conformant: every report kept the contract")


def _say(line: str) -> None:
    out.print(line, markup=False, highlight=False)


def commands() -> typer.Typer:
    """The study's commands."""
    cli = typer.Typer(
        help="The attribution-reliability study: the held-out run's cost projection and an "
        "engine's conformance check.",
        no_args_is_help=True,
    )
    cli.command("plan")(user_errors(plan_cmd))
    cli.command("check-engine")(user_errors(check_engine_cmd))
    return cli
