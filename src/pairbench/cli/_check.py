"""``pairbench check``."""

from __future__ import annotations

from pathlib import Path

import typer

from pairbench.cli._app import app, err, out, user_errors
from pairbench.spec import check_experiment


@app.command()
@user_errors
def check(file: Path = typer.Argument(..., help="The experiment.yaml to validate.")) -> None:
    """Validate an experiment file, reporting every problem in one pass (exit 2 if any).

    Example:

        pairbench check experiment.yaml
    """
    problems = check_experiment(file)
    if problems:
        for problem in problems:
            err.print(str(problem), markup=False, highlight=False, soft_wrap=True)
        err.print(f"{len(problems)} problem(s) found in {file}.", style="bold red")
        raise typer.Exit(2)
    out.print(f"{file}: ok")
    for line in [*_limit_lines(file), *_study_lines(file)]:
        out.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)


def _limit_lines(file: Path) -> list[str]:
    """The per-attempt limits in force in each arm, and what enforces each on this machine."""
    from pairbench._confine import mechanisms
    from pairbench.spec._limits import format_size
    from pairbench.spec._load import load_experiment

    exp = load_experiment(file).experiment
    by_arm = {arm: exp.arm_limits(arm) for arm in exp.arms}
    lines = ["limits per attempt:"]
    if len(set(by_arm.values())) == 1:
        lines.append(f"  every arm: {', '.join(next(iter(by_arm.values())).lines())}")
    else:
        lines += [f"  {arm}: {', '.join(limits.lines())}" for arm, limits in by_arm.items()]
    kept = format_size(exp.budget.workspace_kept)
    lines.append(
        f"  workspace kept in the run folder: {kept} (beyond it, a manifest of names, sizes and "
        "SHA-256 replaces the bytes)"
    )
    how = mechanisms()
    lines.append(
        f"  enforced by: output {how.output}; memory {how.memory}; processes "
        f"{how.processes}; file size {how.file_size}"
    )
    return lines


def _study_lines(file: Path) -> list[str]:
    """What the study the experiment names says its report will show, and miss (advice)."""
    from pairbench.spec._load import load_experiment
    from pairbench.studies import load_study

    loaded = load_experiment(file)
    name = loaded.experiment.study
    if not name:
        return []
    study = load_study(name)
    if study.check is None:
        return []
    return [f"study {name}: what its report will show:", *study.check(loaded)]
