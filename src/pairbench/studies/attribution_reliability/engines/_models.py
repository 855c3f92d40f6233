"""What an attribution engine is given and what it answers: versioned, frozen records.

An **engine** is the system under test of the attribution-reliability study: it browses a
site as simulated users (``scan``) or judges recorded sessions (``judge``) and publishes
findings that blame the product, or sets problems aside. Its only input is an
``EngineRequest``; its only output an ``EngineReport``. A report that does not validate is
the engine's parse failure (a runtime failure), never pairbench's.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from pairbench._model import Frozen

REQUEST_SCHEMA = "pairbench.attribution.request/1"
REPORT_SCHEMA = "pairbench.attribution.report/1"

ClaimScope = Literal["product_behavior", "product_absence", "product_content", "usability"]
SetAsideReason = Literal[
    "environment", "safety", "our_hand", "insufficient_evidence", "out_of_scope"
]


class Wire(Frozen):
    """A record on the wire between pairbench and an engine: frozen, unknown keys refused,
    and each field's docstring its description in the published JSON Schema
    (``engines/schema/``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Persona(Wire):
    """One simulated user: an id and a natural goal (the only manifest value an engine sees)."""

    user: str
    """The user's id (``u1``, ``u2``, ...); a report names users by it."""
    goal: str
    """What the user wants, in their words: never what is broken or that this is a test."""


class Budget(Wire):
    """Per-user limits (the protocol's production Free Scan values by default)."""

    actions_per_user: int = Field(default=10, ge=1)
    """Browser actions one user may take (click, fill, scroll, navigate, ...)."""
    seconds_per_user: float = Field(default=130.0, gt=0, allow_inf_nan=False)
    """Seconds one user may browse; the whole call is killed at users x this + 60 s."""


class RecordedStep(Wire):
    """One scripted action as it was recorded in a real browser (judge mode)."""

    step: int
    """The step's number within the session, from 1."""
    action: str
    """What the hand did: ``goto``, ``click``, ``fill``, ``scroll``, ``hover``, ..."""
    target: str = ""
    """What it aimed at, as the user would name it (role and name, or a description)."""
    hand: Literal["ok", "missed"]
    """``missed``: the scripted hand did not hit its target (not the product's doing)."""
    url: str
    """The page's URL after the step (on the live site: it may be opened again)."""
    status: int | None = None
    """The HTTP status of the navigation the step caused, if any."""
    screenshot: str | None = None
    """PNG, base64."""
    snapshot: str = ""
    """The page's accessibility snapshot after the step (text)."""
    console_errors: list[str] = Field(default_factory=list)
    """The page's console errors during the step."""
    t_ms: float
    """Milliseconds since the session started."""
    sentences: list[str] = Field(default_factory=list)
    """What the user said after this step (narration; no ids, no labels)."""


class RecordedSession(Wire):
    """One scripted user's recorded session."""

    user: str
    """The user's id, as in ``personas``."""
    goal: str
    """The user's goal, as in ``personas``."""
    steps: list[RecordedStep]
    """The recorded steps, in order."""


class EngineRequest(Wire):
    """An engine's only input."""

    schema_: Literal["pairbench.attribution.request/1"] = Field(
        default="pairbench.attribution.request/1", alias="schema"
    )
    """The request's version; a new one is a new schema file, never an edit of this one."""
    mode: Literal["scan", "judge"]
    """``scan``: browse ``start_url`` as each persona. ``judge``: judge ``sessions``."""
    start_url: str
    """The case's site (``<base>/v/<slug>``), live for the whole call."""
    personas: list[Persona] = Field(min_length=1)
    """The simulated users, one per session."""
    budget: Budget = Field(default_factory=Budget)
    """Per-user limits."""
    model_seed: int
    """A 31-bit seed to send to every model call (the same for every arm of a trial)."""
    sessions: list[RecordedSession] | None = None
    """Judge mode only: the recorded bundle every arm judges."""

    model_config = Wire.model_config | {"populate_by_name": True}

    def wire(self) -> dict[str, Any]:
        """The JSON object an engine receives (``schema`` spelled as on the wire)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class EngineError(Wire):
    """An error the engine met; any error makes the session a runtime failure."""

    kind: Literal["model", "internal", "parse", "timeout"]
    """``model``: a model call failed; ``internal``: the engine's own code; ``parse``: a
    model's output could not be read; ``timeout``: a limit of its own ran out."""
    message: str = ""
    """One line. Starting it with ``auth:`` or ``quota:`` (the provider refused the key or
    the quota) makes the session infrastructure, re-run once, when no model call of the run
    has succeeded yet (no ``usage`` reported so far); afterwards it is a runtime failure."""


class Evidence(Wire):
    """What a finding rests on."""

    text: str = ""
    """The evidence in words (quotes, what was seen)."""
    users: list[str] = Field(default_factory=list)
    """The ids of the users whose sessions show it (from ``personas``)."""


class Finding(Wire):
    """A published finding (after the engine's own filters): it blames the product."""

    id: str
    """The engine's own id for the finding, unique within the report."""
    headline: str = ""
    what_happened: str = ""
    why_it_matters: str = ""
    confidence_note: str = ""
    expectation: str = ""
    evidence: Evidence = Field(default_factory=Evidence)
    """What the finding rests on."""
    claim_scope: ClaimScope
    """What the finding claims: broken behaviour, something absent, wrong content, or a
    usability problem."""


class SetAside(Wire):
    """A candidate problem the engine did not blame on the product, and why."""

    summary: str = ""
    """The problem in one line."""
    users: list[str] = Field(default_factory=list)
    """The ids of the users who met it."""
    reason: SetAsideReason
    """Why it is not the product's: the environment, a safety refusal, the engine's own
    hand, too little evidence, or outside what the visit could judge."""


class Quote(Wire):
    """A user's takeaway in the quote pool; ``kept`` survived the engine's ending check."""

    user: str
    """The id of the user who said it."""
    text: str
    """The sentence."""
    status: Literal["kept", "dropped"]
    """``kept``: the engine would show it; ``dropped``: its ending check removed it."""


class Observation(Wire):
    """What one user met at one step (recall's "met the target" reads these)."""

    user: str
    """The user's id."""
    step: int
    """The step's number within the user's session."""
    target: str = ""
    """What the user aimed at."""
    reached_element: str = ""
    """What the action actually reached."""
    outcome_text: str = ""
    """What the page showed afterwards."""
    page_url: str = ""
    """The page's URL at the step."""


class ReportUser(Wire):
    """A user whose session the report covers."""

    user: str
    """The user's id (a follow-up user the engine added gets a new one)."""
    scripted: bool
    """Whether the user was a recorded (judge mode) user rather than the engine's own."""


class Usage(Wire):
    """One model's use during the call; the run's cost is summed from these."""

    model: str
    """The model, as ``provider:name`` (``openai:gpt-5-mini``)."""
    input_tokens: int = Field(default=0, ge=0)
    """Input (prompt) tokens."""
    output_tokens: int = Field(default=0, ge=0)
    """Output (completion) tokens."""
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """What the calls cost in USD; absent: unknown (the cost is then missing)."""
    provenance: Literal["measured", "estimated"]
    """``measured``: from the provider's answer; ``estimated``: the engine's own estimate."""


class EngineReport(Wire):
    """An engine's only output. Unknown fields are refused (``extra="forbid"``)."""

    schema_: Literal["pairbench.attribution.report/1"] = Field(
        default="pairbench.attribution.report/1", alias="schema"
    )
    """The report's version (optional; if given, exactly this)."""
    status: Literal["completed", "failed", "cancelled"]
    """``completed``, or the engine's own run ended ``failed``/``cancelled`` (a runtime
    failure, scored on what it published)."""
    errors: list[EngineError] = Field(default_factory=list)
    """Errors met; any makes the session a runtime failure."""
    findings: list[Finding] = Field(default_factory=list)
    """Published findings: each blames the product."""
    set_aside: list[SetAside] = Field(default_factory=list)
    """Problems met but not blamed on the product."""
    quote_pool: list[Quote] = Field(default_factory=list)
    """Users' takeaways, kept or dropped by the engine's ending check."""
    observations: list[Observation] = Field(default_factory=list)
    """What each user met at each step."""
    users: list[ReportUser] = Field(default_factory=list)
    """The users whose sessions the report covers."""
    usage: list[Usage] = Field(default_factory=list)
    """Model use, one entry per model; empty: the engine reports no model use."""

    model_config = Wire.model_config | {"populate_by_name": True}

    def wire(self) -> dict[str, Any]:
        """The JSON object as an engine writes it (``schema`` spelled as on the wire)."""
        return self.model_dump(mode="json", by_alias=True)

    @property
    def runtime_failure(self) -> bool:
        """The engine ended failed or cancelled, or reported an error: scored on what it
        published, listed, never re-run."""
        return self.status != "completed" or bool(self.errors)
