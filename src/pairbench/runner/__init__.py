"""Executing a schedule: attempts, timeouts, the infra policy, budgets, resume."""

from pairbench.runner._api import RunOutcome, resume_run, start_run
from pairbench.runner._context import CANARY_ENV, canary_for
from pairbench.runner._screening import (
    Proposal,
    Screening,
    plan_confirmation,
    read_screening,
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
