"""A task: one unit of work (prompt, fixture, ground truth, grader), and the trial limits."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pairbench._model import Frozen
from pairbench.spec._ids import SafeId

MAX_TRIALS = 100_000
"""Trials of one task: past this a typo (an extra digit or ten) would plan a run that never
ends; ``check`` says so instead."""
MAX_PLANNED_TRIALS = 1_000_000
"""Trials of a whole run (arms x each task's trials): the scale a report is measured at
(docs/run-directory.md, "The trial table"); a bigger plan is refused by ``check``, not
found to hang."""


class GraderRef(Frozen):
    """A grader by registered name, with its arguments."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Task(Frozen):
    """One unit of work: prompt, fixture, ground truth and grader."""

    id: SafeId
    labels: dict[str, str | int] = Field(default_factory=dict)
    """Grouping labels, such as ``tier``."""
    prompt: str
    """Path (relative to the experiment file) of a prompt template; ``${fixture.x}`` is filled
    from the trial's seeded fixture content."""
    fixture: str | None = None
    """A name registered under ``pairbench.fixtures``: seeded content and ground truth."""
    grader: GraderRef
    trials: int | None = Field(default=None, ge=1, le=MAX_TRIALS)
    """Overrides the experiment's trial count for this task."""
    plan: str | None = None
    """Path of the scripted agent's plan for this task (ignored by other agents)."""
    case_set: Literal["calibration", "held-out"] = "calibration"
    """``held-out`` tasks run only under a lock that verifies (``run --case-set held-out``)."""
    cost_per_trial_usd: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, exclude_if=lambda v: v is None
    )
    """This task's worst-case cost per attempt, reserved against the ceiling before each
    attempt starts (overrides ``budget.cost_per_trial_usd``). Left out of the hash when unset."""
    phase: int = Field(default=0, ge=0, le=99, exclude_if=lambda v: v == 0)
    """With ``pair_order: round``, tasks of a lower phase run first (e.g. end-to-end cases in
    phase 0, evidence packages in phase 1). Left out of the hash at 0."""


__all__ = ["MAX_PLANNED_TRIALS", "MAX_TRIALS", "GraderRef", "Task"]
