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
from pairbench.schedule._plan import (
    Campaign,
    Pair,
    Schedule,
    TrialKey,
    build_schedule,
    campaign_id,
    campaign_schedule,
    screening_order,
)
from pairbench.schedule._seeds import derive_run_seed, derive_seed, model_seed

__all__ = [
    "Approval",
    "Campaign",
    "ConfirmationPlan",
    "Pair",
    "PlanError",
    "Schedule",
    "TrialKey",
    "WallTime",
    "approve",
    "build_confirmation_plan",
    "build_schedule",
    "campaign_id",
    "campaign_schedule",
    "confirmation_order",
    "derive_run_seed",
    "derive_seed",
    "model_seed",
    "plan_problems",
    "plan_sha256",
    "read_plan",
    "require_approved",
    "screening_order",
    "write_plan",
]
