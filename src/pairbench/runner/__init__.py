"""Executing a schedule: attempts, timeouts, the infra policy, budgets, resume."""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
    from pairbench.runner._api import RunOutcome, resume_run, start_run
    from pairbench.runner._context import CANARY_ENV, canary_for
    from pairbench.runner._screening import (
        Proposal,
        Screening,
        plan_confirmation,
        read_screening,
    )

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "CANARY_ENV": "pairbench.runner._context",
        "Proposal": "pairbench.runner._screening",
        "RunOutcome": "pairbench.runner._api",
        "Screening": "pairbench.runner._screening",
        "canary_for": "pairbench.runner._context",
        "plan_confirmation": "pairbench.runner._screening",
        "read_screening": "pairbench.runner._screening",
        "resume_run": "pairbench.runner._api",
        "start_run": "pairbench.runner._api",
    },
)

__all__ = [
    "CANARY_ENV",
    "Proposal",
    "RunOutcome",
    "Screening",
    "canary_for",
    "plan_confirmation",
    "read_screening",
    "resume_run",
    "start_run",
]
