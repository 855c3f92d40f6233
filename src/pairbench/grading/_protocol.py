"""What a grader is: a function from what happened (ground truth first) to a verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pairbench.fixtures._protocol import FixtureState
from pairbench.spec._task import Task
from pairbench.store._records import Grade


@dataclass(frozen=True)
class GradeInput:
    """Everything a grader may look at. Judge from ``state`` (ground truth), not self-report."""

    task: Task
    args: dict[str, Any]
    """The task's ``grader.args``."""
    content: dict[str, Any]
    """The trial's seeded fixture content (expected answers are derived from it)."""
    state: FixtureState | None
    """The fixture's store and audit log after the attempt (None without a fixture server)."""
    final_answer: str | None
    events: list[dict[str, Any]] = field(default_factory=list)
    """The normalized transcript."""
    arm: str = ""


Grader = Callable[[GradeInput], Grade]
"""Registered under the ``pairbench.graders`` entry point."""
