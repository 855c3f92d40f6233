"""What one heuristic user ends with, before users are merged into a report."""

from __future__ import annotations

from dataclasses import dataclass, field

from pairbench._model import Frozen
from pairbench.studies.attribution_reliability.engines._models import (
    ClaimScope,
    EngineReport,
    Evidence,
    Finding,
    Observation,
    Quote,
    ReportUser,
    SetAside,
    SetAsideReason,
)


class HeuristicSettings(Frozen):
    """The arm's engine settings (every field fixed by default; tests shorten the waits).

    **Usage**::

        HeuristicSettings.model_validate({"no_effect_wait_s": 2})
    """

    no_effect_wait_s: float = 8.0
    """A click with no request and no DOM change for this long is a no-effect submit (long
    enough that a delayed result is not blamed)."""
    slow_wait_s: float = 20.0
    """A page or request still pending after this long is set aside (``environment``)."""
    settle_ms: int = 400
    """The page must stop changing this long after an effect before the outcome is read."""
    action_timeout_s: float = 3.0
    """How long the hand tries to reach one control."""


@dataclass(frozen=True)
class Blame:
    """A finding one user would publish; ``key`` merges the same cause across users."""

    key: str
    scope: ClaimScope
    headline: str
    what_happened: str
    why_it_matters: str
    evidence: str


@dataclass(frozen=True)
class Aside:
    key: str
    reason: SetAsideReason
    summary: str


@dataclass
class UserResult:
    user: str
    blames: list[Blame] = field(default_factory=list)
    asides: list[Aside] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    takeaway: str = ""
    quotes: list[Quote] = field(default_factory=list)
    """Judge mode: every recorded sentence, kept or dropped (scan keeps ``takeaway``)."""
    scripted: bool = False


def quoted(text: str, limit: int = 80) -> str:
    """A page's text as quoted in a finding: one line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def merge(results: list[UserResult]) -> EngineReport:
    """One report from every user's result: the same cause (``key``) is one finding or one
    set-aside item citing every user who met it, in first-seen order."""
    findings: dict[str, Finding] = {}
    asides: dict[tuple[str, str], SetAside] = {}
    for result in results:
        for blame in result.blames:
            if blame.key in findings:
                old = findings[blame.key]
                users = [*old.evidence.users, result.user]
                findings[blame.key] = old.model_copy(
                    update={"evidence": Evidence(text=old.evidence.text, users=users)}
                )
                continue
            findings[blame.key] = Finding(
                id=f"f{len(findings) + 1}",
                headline=blame.headline,
                what_happened=blame.what_happened,
                why_it_matters=blame.why_it_matters,
                confidence_note=("Seen by a rule-based reference engine; not reviewed by a model."),
                expectation="The control does what its label says, or says why it cannot.",
                evidence=Evidence(text=blame.evidence, users=[result.user]),
                claim_scope=blame.scope,
            )
        for aside in result.asides:
            key = (aside.reason, aside.key)
            if key in asides:
                old_aside = asides[key]
                asides[key] = old_aside.model_copy(
                    update={"users": [*old_aside.users, result.user]}
                )
                continue
            asides[key] = SetAside(summary=aside.summary, users=[result.user], reason=aside.reason)
    return EngineReport(
        status="completed",
        findings=list(findings.values()),
        set_aside=list(asides.values()),
        quote_pool=[q for r in results for q in _quotes(r)],
        observations=[o for r in results for o in r.observations],
        users=[ReportUser(user=r.user, scripted=r.scripted) for r in results],
        usage=[],
    )


def _quotes(result: UserResult) -> list[Quote]:
    if result.quotes or not result.takeaway:
        return result.quotes
    return [Quote(user=result.user, text=result.takeaway, status="kept")]
