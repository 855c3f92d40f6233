"""Executing a schedule: attempts, timeouts, the infra policy, budgets, resume."""

from pairbench.runner._api import RunOutcome, resume_run, start_run
from pairbench.runner._context import CANARY_ENV, canary_for

__all__ = ["CANARY_ENV", "RunOutcome", "canary_for", "resume_run", "start_run"]
