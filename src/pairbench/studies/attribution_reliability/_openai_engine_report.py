"""What the ``openai`` engine's report and ending-check calls read and what it makes of them.

Scan and judge mode meet here: each user's session becomes a ``UserRecord`` (steps, what the
browser showed, what the user said), the report call reads all of them as JSON, and its
answer becomes findings, set-aside items and takeaways. The engine's own filters: a finding
must cite a user of the request (else it is dropped), ids are the engine's (``f1``, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, ValidationError

from pairbench._model import Frozen
from pairbench.studies.attribution_reliability._openai_engine_browser import _plain
from pairbench.studies.attribution_reliability._openai_engine_model import ModelFailure
from pairbench.studies.attribution_reliability.engines._models import (
    ClaimScope,
    Evidence,
    Finding,
    Observation,
    RecordedSession,
    SetAside,
    SetAsideReason,
)

SESSIONS_HEADER = "Sessions (JSON):"
CHECK_HEADER = "Sentence and browser record (JSON):"
_SHOWN_CHARS = 20_000
_FINAL_SNAPSHOT_CHARS = 12_000


@dataclass
class UserRecord:
    """One user's session as the report and ending-check calls read it."""

    user: str
    goal: str
    scripted: bool
    steps: list[dict[str, Any]] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    """Snapshots and outcome texts the user's browser showed, in order."""
    said: list[str] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)

    def wire(self) -> dict[str, Any]:
        last = next((s for s in reversed(self.shown) if s.strip()), "")
        return {
            "user": self.user, "goal": self.goal, "steps": self.steps,
            "final_snapshot": last[:_FINAL_SNAPSHOT_CHARS], "said": self.said,
        }  # fmt: skip

    def browser_record(self) -> list[str]:
        """What the ending check sets a sentence against: the latest texts first, bounded."""
        out: list[str] = []
        size = 0
        for text in reversed(self.shown):
            if text in out:
                continue
            if size + len(text) > _SHOWN_CHARS:
                break
            out.insert(0, text)
            size += len(text)
        return out


def recorded(session: RecordedSession) -> UserRecord:
    """A judge-mode user from a recorded (scripted) session."""
    record = UserRecord(session.user, session.goal, scripted=True)
    previous = ""
    for step in session.steps:
        new = [line for line in _plain(step.snapshot) if line not in set(_plain(previous))]
        outcome = " | ".join(new)[:600] or "no visible change"
        if step.status is not None and step.status >= 400:
            outcome += f" (status {step.status})"
        reached = step.target if step.hand == "ok" else ""
        record.steps.append(
            {"step": step.step, "action": step.action, "target": step.target,
             "hand": step.hand, "outcome": outcome, "url": step.url, "status": step.status,
             "console_errors": step.console_errors, "said": step.sentences}
        )  # fmt: skip
        record.observations.append(
            Observation(user=session.user, step=step.step, target=step.target,
                        reached_element=reached, outcome_text=outcome, page_url=step.url)
        )  # fmt: skip
        if step.snapshot:
            record.shown.append(step.snapshot)
        previous = step.snapshot or previous
        record.said.extend(step.sentences)
    return record


def sessions_message(records: list[UserRecord]) -> str:
    payload = {"sessions": [r.wire() for r in records]}
    return f"{SESSIONS_HEADER}\n{json.dumps(payload, ensure_ascii=False)}"


def check_message(record: UserRecord, sentence: str) -> str:
    payload = {"user": record.user, "sentence": sentence, "browser_showed": record.browser_record()}
    return f"{CHECK_HEADER}\n{json.dumps(payload, ensure_ascii=False)}"


class _Finding(Frozen):
    headline: str
    what_happened: str
    why_it_matters: str
    confidence_note: str
    expectation: str
    evidence_text: str
    users: list[str]
    claim_scope: ClaimScope


class _SetAside(Frozen):
    summary: str
    users: list[str]
    reason: SetAsideReason


class _Takeaway(Frozen):
    user: str
    text: str


class _Report(Frozen):
    findings: list[_Finding] = Field(default_factory=list)
    set_aside: list[_SetAside] = Field(default_factory=list)
    takeaways: list[_Takeaway] = Field(default_factory=list)


class Verdict(Frozen):
    supported: bool
    reason: str = ""


@dataclass(frozen=True)
class ParsedReport:
    findings: list[Finding]
    set_aside: list[SetAside]
    takeaways: list[tuple[str, str]]
    """(user, sentence), only for users of the request."""


def _json(content: str | None, what: str) -> Any:
    text = (content or "").strip()
    if text.startswith("```"):  # some compatible servers fence JSON despite json_schema
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text)
    except ValueError:
        raise ModelFailure("parse", f"the {what} is not JSON: {text[:200]!r}") from None


def parse_report(content: str | None, users: set[str]) -> ParsedReport:
    """The report call's answer, filtered; ``ModelFailure("parse")`` when it is unusable."""
    try:
        report = _Report.model_validate(_json(content, "report"))
    except ValidationError as exc:
        raise ModelFailure("parse", f"the report does not fit its schema: {exc}") from None
    findings = [
        Finding(
            id=f"f{i}",
            headline=f.headline,
            what_happened=f.what_happened,
            why_it_matters=f.why_it_matters,
            confidence_note=f.confidence_note,
            expectation=f.expectation,
            claim_scope=f.claim_scope,
            evidence=Evidence(text=f.evidence_text, users=[u for u in f.users if u in users]),
        )
        for i, f in enumerate((f for f in report.findings if set(f.users) & users), start=1)
    ]
    set_aside = [
        SetAside(summary=s.summary, users=[u for u in s.users if u in users], reason=s.reason)
        for s in report.set_aside
    ]
    takeaways = [(t.user, t.text) for t in report.takeaways if t.user in users and t.text.strip()]
    return ParsedReport(findings, set_aside, takeaways)


def parse_verdict(content: str | None) -> bool:
    """An ending check's answer: is the sentence supported by the browser record?"""
    try:
        return Verdict.model_validate(_json(content, "ending check")).supported
    except ValidationError as exc:
        raise ModelFailure("parse", f"the ending check does not fit its schema: {exc}") from None
