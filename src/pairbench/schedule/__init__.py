"""Paired seeds and the planned order of every attempt."""

from pairbench.schedule._plan import Pair, Schedule, TrialKey, build_schedule
from pairbench.schedule._seeds import derive_run_seed, derive_seed, model_seed

__all__ = [
    "Pair",
    "Schedule",
    "TrialKey",
    "build_schedule",
    "derive_run_seed",
    "derive_seed",
    "model_seed",
]
