"""Paired seeds, the planned order of every attempt, and confirmation plans."""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
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

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Approval": "pairbench.schedule._confirmation",
        "Campaign": "pairbench.schedule._plan",
        "ConfirmationPlan": "pairbench.schedule._confirmation",
        "Pair": "pairbench.schedule._plan",
        "PlanError": "pairbench.schedule._approval",
        "Schedule": "pairbench.schedule._plan",
        "TrialKey": "pairbench.schedule._plan",
        "WallTime": "pairbench.schedule._confirmation",
        "approve": "pairbench.schedule._approval",
        "build_confirmation_plan": "pairbench.schedule._confirmation",
        "build_schedule": "pairbench.schedule._plan",
        "campaign_id": "pairbench.schedule._plan",
        "campaign_schedule": "pairbench.schedule._plan",
        "confirmation_order": "pairbench.schedule._confirmation",
        "derive_run_seed": "pairbench.schedule._seeds",
        "derive_seed": "pairbench.schedule._seeds",
        "model_seed": "pairbench.schedule._seeds",
        "plan_problems": "pairbench.schedule._confirmation",
        "plan_sha256": "pairbench.schedule._confirmation",
        "read_plan": "pairbench.schedule._approval",
        "require_approved": "pairbench.schedule._approval",
        "screening_order": "pairbench.schedule._plan",
        "write_plan": "pairbench.schedule._approval",
    },
)

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
