"""Results with and without replaced attempts.

An attempt that fails for infrastructure reasons (harness or fixture) is retried, and the
retry's result becomes the trial's result: the first attempt was *replaced*. A reader
should see that retrying did not move the numbers, so the report shows both:

- **with replacements**: each trial's final result (the retried attempt's, when retried);
- **without replacements**: each trial's first attempt only, an infra-failed first
  attempt counted as a miss (scored, not passed).

Interrupted attempts are not replacements: the operator stopped the run, the trial did
not fail, and resume re-runs it. They are listed under "attention" and ignored here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairbench.report._common import Key
from pairbench.store._records import SCORED_OUTCOMES, TrialResult

TrialId = tuple[str, str, int]
"""(arm, task, trial)."""

Passed = dict[str, dict[Key, bool]]
"""Per arm, per scored trial (task, trial): did it pass."""


def first_attempts(
    final: Mapping[TrialId, TrialResult], kept: Sequence[TrialResult]
) -> dict[TrialId, TrialResult]:
    """Per trial, its first attempt: its lowest-numbered infra attempt, else its final result.

    The runner retries only after an infra failure and never after a final result, so a
    trial with a kept infra attempt had an infra-failed first attempt. Interrupted attempts
    are skipped (the operator stopped the run; resume re-runs the trial).
    """
    out = dict(final)
    infra: dict[TrialId, TrialResult] = {}
    for r in kept:
        key = (r.arm, r.task, r.trial)
        if r.outcome == "infra" and (key not in infra or r.attempt < infra[key].attempt):
            infra[key] = r
    out.update(infra)
    return out


def replaced_trials(first: Mapping[TrialId, TrialResult]) -> list[TrialId]:
    """Trials whose first attempt failed for infra reasons (so a retry, or nothing, replaced it)."""
    # Final results are never infra (infra attempts are kept apart), so an infra first
    # attempt always stands for a replaced one.
    return sorted(k for k, r in first.items() if r.outcome == "infra")


def passed_with(final: Mapping[TrialId, TrialResult], arms: Sequence[str]) -> Passed:
    """With replacements: every scored final result."""
    out: Passed = {arm: {} for arm in arms}
    for (arm, task, trial), r in final.items():
        if r.outcome in SCORED_OUTCOMES:
            out.setdefault(arm, {})[(task, trial)] = r.outcome == "passed"
    return out


def passed_without(first: Mapping[TrialId, TrialResult], arms: Sequence[str]) -> Passed:
    """Without replacements: every scored first attempt, an infra-failed one as a miss."""
    out: Passed = {arm: {} for arm in arms}
    for (arm, task, trial), r in first.items():
        if r.outcome in SCORED_OUTCOMES or r.outcome == "infra":
            out.setdefault(arm, {})[(task, trial)] = r.outcome == "passed"
    return out
