"""Paired seeds, the planned order of every attempt, and confirmation plans."""

from pairbench.schedule._approval import (
    PlanError,
    approve,
    read_plan,
    require_approved,
    write_plan,
)
from pairbench.schedule._confirmation import (
    Approval,
    ConfirmationPlan,
    WallTime,
    build_confirmation_plan,
    confirmation_order,
    plan_problems,
    plan_sha256,
)
from pairbench.schedule._plan import Pair, Schedule, TrialKey, build_schedule
from pairbench.schedule._seeds import derive_run_seed, derive_seed, model_seed

__all__ = [
    "Approval",
    "ConfirmationPlan",
    "Pair",
    "PlanError",
    "Schedule",
    "TrialKey",
    "WallTime",
    "approve",
    "build_confirmation_plan",
    "build_schedule",
    "confirmation_order",
    "derive_run_seed",
    "derive_seed",
    "model_seed",
    "plan_problems",
    "plan_sha256",
    "read_plan",
    "require_approved",
    "write_plan",
]
