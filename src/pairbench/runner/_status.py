"""A run's status from here on, as a journal event (run.json is never rewritten)."""

from __future__ import annotations

import contextlib

from pairbench._errors import RunDirError
from pairbench.store._events import RunEnded
from pairbench.store._run_dir import RunDir


def mark_ended(run_dir: RunDir, status: str) -> None:
    """Append ``run_ended`` with ``status`` (complete, interrupted, stopped: ...)."""
    journal = run_dir.journal()
    try:
        journal.append(RunEnded(status=status))
    finally:
        journal.close()


def mark_stopped(run_dir: RunDir, status: str) -> None:
    """:func:`mark_ended` on the way out of a failure: the disk may refuse this too, and the
    error raised next says what happened."""
    with contextlib.suppress(OSError, RunDirError):
        mark_ended(run_dir, status)
