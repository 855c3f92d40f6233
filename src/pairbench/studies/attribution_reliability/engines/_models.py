"""What an attribution engine is given and what it answers: versioned, frozen records.

An **engine** is the system under test of the attribution-reliability study: it browses a
site as simulated users (``scan``) or judges recorded sessions (``judge``) and publishes
findings that blame the product, or sets problems aside. Its only input is an
``EngineRequest``; its only output an ``EngineReport``. A report that does not validate is
the engine's parse failure (a runtime failure), never pairbench's.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pairbench._model import Frozen

REQUEST_SCHEMA = "pairbench.attribution.request/1"
REPORT_SCHEMA = "pairbench.attribution.report/1"

ClaimScope = Literal["product_behavior", "product_absence", "product_content", "usability"]
SetAsideReason = Literal[
    "environment", "safety", "our_hand", "insufficient_evidence", "out_of_scope"
]


class Persona(Frozen):
    """One simulated user: an id and a natural goal (the only manifest value an engine sees)."""

    user: str
    goal: str


class Budget(Frozen):
    """Per-user limits (the protocol's production Free Scan values by default)."""

    actions_per_user: int = Field(default=10, ge=1)
    seconds_per_user: float = Field(default=130.0, gt=0, allow_inf_nan=False)


class RecordedStep(Frozen):
    """One scripted action as it was recorded in a real browser (judge mode)."""

    step: int
    action: str
    """What the hand did: ``goto``, ``click``, ``fill``, ``scroll``, ``hover``, ..."""
    target: str = ""
    """What it aimed at, as the user would name it (role and name, or a description)."""
    hand: Literal["ok", "missed"]
    url: str
    status: int | None = None
    screenshot: str | None = None
    """PNG, base64."""
    snapshot: str = ""
    """The page's accessibility snapshot after the step (text)."""
    console_errors: list[str] = Field(default_factory=list)
    t_ms: float
    sentences: list[str] = Field(default_factory=list)
    """What the user said after this step (narration; no ids, no labels)."""


class RecordedSession(Frozen):
    """One scripted user's recorded session."""

    user: str
    goal: str
    steps: list[RecordedStep]


class EngineRequest(Frozen):
    """An engine's only input."""

    schema_: Literal["pairbench.attribution.request/1"] = Field(
        default="pairbench.attribution.request/1", alias="schema"
    )
    mode: Literal["scan", "judge"]
    start_url: str
    personas: list[Persona] = Field(min_length=1)
    budget: Budget = Field(default_factory=Budget)
    model_seed: int
    sessions: list[RecordedSession] | None = None
    """Judge mode only: the recorded bundle every arm judges."""

    model_config = Frozen.model_config | {"populate_by_name": True}

    def wire(self) -> dict[str, Any]:
        """The JSON object an engine receives (``schema`` spelled as on the wire)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class EngineError(Frozen):
    kind: Literal["model", "internal", "parse", "timeout"]
    message: str = ""


class Evidence(Frozen):
    text: str = ""
    users: list[str] = Field(default_factory=list)


class Finding(Frozen):
    """A published finding (after the engine's own filters): it blames the product."""

    id: str
    headline: str = ""
    what_happened: str = ""
    why_it_matters: str = ""
    confidence_note: str = ""
    expectation: str = ""
    evidence: Evidence = Field(default_factory=Evidence)
    claim_scope: ClaimScope


class SetAside(Frozen):
    """A candidate problem the engine did not blame on the product, and why."""

    summary: str = ""
    users: list[str] = Field(default_factory=list)
    reason: SetAsideReason


class Quote(Frozen):
    """A user's takeaway in the quote pool; ``kept`` survived the engine's ending check."""

    user: str
    text: str
    status: Literal["kept", "dropped"]


class Observation(Frozen):
    """What one user met at one step (recall's "met the target" reads these)."""

    user: str
    step: int
    target: str = ""
    reached_element: str = ""
    outcome_text: str = ""
    page_url: str = ""


class ReportUser(Frozen):
    user: str
    scripted: bool


class Usage(Frozen):
    model: str
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    provenance: Literal["measured", "estimated"]


class EngineReport(Frozen):
    """An engine's only output. Unknown fields are refused (``extra="forbid"``)."""

    schema_: Literal["pairbench.attribution.report/1"] = Field(
        default="pairbench.attribution.report/1", alias="schema"
    )
    status: Literal["completed", "failed", "cancelled"]
    errors: list[EngineError] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    set_aside: list[SetAside] = Field(default_factory=list)
    quote_pool: list[Quote] = Field(default_factory=list)
    observations: list[Observation] = Field(default_factory=list)
    users: list[ReportUser] = Field(default_factory=list)
    usage: list[Usage] = Field(default_factory=list)

    model_config = Frozen.model_config | {"populate_by_name": True}

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @property
    def runtime_failure(self) -> bool:
        """The engine ended failed or cancelled, or reported an error: scored on what it
        published, listed, never re-run."""
        return self.status != "completed" or bool(self.errors)
