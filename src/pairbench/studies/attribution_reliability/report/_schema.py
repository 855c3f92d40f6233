"""The summary's ``attribution`` part: an attribution-reliability run's machine score."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from pairbench.studies.attribution_reliability._score_models import Scorecard
from pairbench.studies.attribution_reliability._spend import SpendAccount

if TYPE_CHECKING:
    from pairbench.studies.attribution_reliability._session import SessionEvidence

STATEMENT = (
    "These controlled cases measure attribution reliability, not prediction of real-human behavior."
)


class CalibrationSession(BaseModel):
    """One calibration session, listed as a diagnostic (never a result)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arm: str
    task: str
    trial: int
    case: str | None
    """``None``: the session was not run (or left no evidence)."""
    published: int
    set_aside: int
    runtime_failure: str | None
    headlines: list[str]

    @classmethod
    def of(
        cls, arm: str, task: str, trial: int, evidence: SessionEvidence | None
    ) -> CalibrationSession:
        report = evidence.report if evidence is not None else None
        failure = evidence.failure if evidence is not None else None
        return cls(
            arm=arm,
            task=task,
            trial=trial,
            case=evidence.case if evidence is not None else None,
            published=len(report.findings) if report else 0,
            set_aside=len(report.set_aside) if report else 0,
            runtime_failure=None if failure is None else f"{failure.kind}: {failure.message}",
            headlines=[f.headline for f in report.findings] if report else [],
        )


class Attribution(BaseModel):
    """The machine score (scorer 1.0) of an attribution-reliability run, per arm."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case_set: str
    """``held-out`` (scored) or ``calibration`` (diagnostics only, never results)."""
    statement: str
    """The protocol's statement, shown first: what these cases measure and what they do not."""
    scorecards: dict[str, Scorecard]
    """Per arm: the seven metrics, confusion matrix, per-class, packages, cost, latency,
    misses and manual-review notes (``results.json`` is this, for one arm)."""
    calibration: list[CalibrationSession]
    """A calibration run's sessions (empty for a held-out run)."""
    uncontained: list[str] = []
    """One line per arm whose local engine ran uncontained (``contained: false``): it could
    read the host, the answers included; shown at the top of the section."""
    recordings: dict[str, str] = Field(default_factory=dict)
    """Per package session (``C-K04#0``): the SHA-256 of the recording judged (recorded once
    per trial under the lock, reused by every arm and run under it)."""
    spend: SpendAccount | None = None
    """What the run counted against the ceiling: its own spend (overshoots and worst-case
    charges named), earlier calibration runs' and the declared prior spend."""

    def results_json(self) -> dict[str, Any]:
        return {arm: card.model_dump(mode="json") for arm, card in self.scorecards.items()}
