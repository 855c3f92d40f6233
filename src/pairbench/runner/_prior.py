"""Spend before a run that counts against its ceiling, as the experiment's study finds it."""

from __future__ import annotations

from pathlib import Path

from pairbench.spec._load import LoadedExperiment
from pairbench.store._load_run import read_run_info
from pairbench.store._run_dir import RunDir
from pairbench.store._run_info import PriorSpend


def study_prior_spend(
    loaded: LoadedExperiment, runs_dir: Path, case_set: str | None
) -> PriorSpend | None:
    """The experiment's study's word on the run before it starts (``Study.before_run``):
    spend before it that counts against its ceiling; it may refuse the run instead."""
    name = loaded.experiment.study
    if name is None:
        return None
    from pairbench.studies import RunStart, load_study

    hook = load_study(name).before_run
    return None if hook is None else hook(RunStart(loaded, runs_dir, case_set))


def recorded_prior(run_dir: RunDir) -> PriorSpend | None:
    """What the study counted when the run started (run.json's ``prior_spend``): a resumed
    run counts it again."""
    prior = read_run_info(run_dir).prior_spend
    return None if prior is None else PriorSpend.model_validate(prior.model_dump())


__all__ = ["PriorSpend", "recorded_prior", "study_prior_spend"]
