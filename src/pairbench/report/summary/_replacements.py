"""Results with and without replaced attempts.

An attempt that fails for infrastructure reasons (harness or fixture) is retried, and the
retry's result becomes the trial's result: the first attempt was *replaced*. A reader
should see that retrying did not move the numbers, so the report shows both:

- **with replacements**: each trial's final result (the retried attempt's, when retried);
- **without replacements**: each trial's first attempt only, an infra-failed first
  attempt counted as a miss (scored, not passed).

A campaign the runner stopped in is re-run whole on resume (``runner._campaigns``): its
final records are kept under ``replaced/`` and are the first attempts of their trials, so
*without replacements* counts them and the replacement campaign only where they are missing.

Interrupted attempts are not replacements: the operator stopped the run, the trial did
not fail, and resume re-runs it. They are listed under "attention" and ignored here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from pairbench.report.summary._frame import Frame
from pairbench.store._records import SCORED_OUTCOMES

Ints = npt.NDArray[np.int64]


class ArmPassed(NamedTuple):
    """One arm's scored trials and whether each passed."""

    keys: Ints
    """Trial keys (``Frame.trial_keys``): unique, one per (task, trial)."""
    task: Ints
    """Each trial's task (index into ``Frame.tasks``)."""
    passed: npt.NDArray[np.bool_]


Passed = dict[str, ArmPassed]
"""Per arm name."""


def _passed(frame: Frame, rows: Ints) -> Passed:
    passed = frame.mask("passed")
    out: Passed = {}
    for i, arm in enumerate(frame.arms):
        mine = frame.of_arm(rows, i)
        out[arm] = ArmPassed(frame.trial_keys(mine), frame.task[mine], passed[mine])
    return out


def passed_with(frame: Frame) -> Passed:
    """With replacements: every scored final result."""
    return _passed(frame, frame.scored)


def passed_without(frame: Frame) -> Passed:
    """Without replacements: every scored first attempt, an infra-failed one as a miss."""
    first = frame.first
    scored = frame.mask(*SCORED_OUTCOMES, "infra")
    return _passed(frame, first[scored[first]])


def replaced_trials(frame: Frame) -> int:
    """Trials whose first attempt was replaced: it failed for infra reasons (a retry, or
    nothing, replaced it) or its campaign was re-run whole."""
    # A first attempt that is a kept record always stands for a replaced one: final
    # results are never kept.
    return int(np.isin(frame.first, frame.kept).sum())
