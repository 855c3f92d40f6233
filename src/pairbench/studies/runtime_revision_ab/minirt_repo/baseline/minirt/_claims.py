"""Completion claims: a claim of done stands only on a fresh passing verifier run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._verify import Progress, VerifierRun


@dataclass(frozen=True)
class Settled:
    """Whether the claim was accepted, what to tell the model, and any run made for it."""

    accepted: bool
    message: str
    run: VerifierRun | None


def settle(status: str, progress: Progress, verify: Callable[[], VerifierRun]) -> Settled:
    """Accept ``incomplete`` as said; accept ``done`` only with a verifier pass after the last
    change, running the verifier first when the latest run is stale."""
    if status != "done":
        return Settled(True, "recorded as incomplete", None)
    if progress.fresh_pass():
        return Settled(True, "completion accepted (verifier passed after the last change)", None)
    # The model did not re-verify after its last change: verify now, before believing it.
    run = verify()
    if run.passed:
        return Settled(True, "completion accepted after a fresh verifier run", run)
    return Settled(False, f"completion refused: the verifier fails now:\n{run.output}", run)
