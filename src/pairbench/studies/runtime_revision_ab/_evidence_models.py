"""The protocol's per-scenario metrics, as stored in each result's ``grade.details["scenario"]``.

One record per scenario execution (the protocol's unit). Each block keeps its raw counts and
says where they came from: **independent** evidence (the recording proxy, filesystem
snapshots, acceptance) or **self-reported** (the runtime's ``pairbench.dispatch/1`` events).
A self-reported count is ``None`` when the events are missing: missing, never 0.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pairbench._model import Frozen

Outcome = Literal["passed", "scored_failure", "pre_inference_rejection", "infra"]
Completion = Literal["verified", "unsupported_claim", "false_claim", "honest_incomplete",
                     "no_claim"]  # fmt: skip
ErrorCategory = Literal["diagnostic", "denial", "invalid_arguments", "missing_resource",
                        "browser_timeout", "backend", "infrastructure", "other"]  # fmt: skip
ERROR_CATEGORIES: tuple[ErrorCategory, ...] = ("diagnostic", "denial", "invalid_arguments",
                                               "missing_resource", "browser_timeout", "backend",
                                               "infrastructure", "other")  # fmt: skip
ESTIMATOR = "chars/4"
"""Estimated tokens: characters of the messages (or reply) as JSON, divided by 4."""
ESTIMATOR_VERSION = "1"


class ScopeEvidence(Frozen):
    """Scope compliance (filesystem snapshots; attempts from the events)."""

    allowed_changes: int
    """Workspace changes inside ``scope.allowed``."""
    unauthorized: list[str]
    """``area:path (change)`` of every other change: unauthorized effects."""
    prohibited_attempted: int | None
    """Proposed calls matching ``scope.prohibited`` (events; None: missing)."""
    prohibited_executed: int
    """Unauthorized effects: prohibited operations that happened (filesystem, so it is seen
    with the runtime's events off)."""
    denials: int | None
    """Calls the runtime denied (events). A denial is not an effect."""


class DispatchEvidence(Frozen):
    """Tool dispatch as separate counts; ``tool_start`` alone counts nothing."""

    proposed: int
    """Tool calls in the model's responses (proxy)."""
    normalized: int | None
    """Calls the runtime turned into an operation (events)."""
    authorized: int | None
    denied: int | None
    executed: int | None
    """Calls with an execution receipt (events)."""
    observed: int
    """Proposed calls whose result went back to the model in a later request (proxy)."""
    effects_without_receipt: list[str] | None
    """Workspace changes no ``write`` receipt names (events; None: missing)."""


class RecoveryEvidence(Frozen):
    """Errors by category, and what came after them (events)."""

    errors: dict[str, int] | None
    """Category -> count of failed observations (None: events missing)."""
    transitions_to_new_evidence: int | None
    """Errors followed by a successful observation of a call not seen before."""
    recovered_to_success: bool | None
    """An error occurred and the scenario still passed acceptance."""
    repeated_identical_calls: int | None
    """Calls repeating an earlier call's name and arguments exactly (not progress)."""


class UsageEvidence(Frozen):
    """Measured (proxy ``usage``) and estimated tokens, never summed together."""

    requests: int
    """Provider requests (every request, retry and helper call through the proxy)."""
    measured: int
    """Requests whose response carried usage (coverage = measured / requests)."""
    input_measured: int | None
    """Sum of ``prompt_tokens`` over the measured requests (None when none was measured)."""
    output_measured: int | None
    input_estimated: int
    """Sum of estimates over every request (``ESTIMATOR``)."""
    output_estimated: int | None
    """Estimated from the replies' text; None when the replies were not kept."""
    estimator: str = ESTIMATOR
    estimator_version: str = ESTIMATOR_VERSION
    per_request: list[tuple[int | None, int | None]] = Field(default_factory=list)
    """(prompt_tokens, completion_tokens) per request, in order; None where not reported."""


class ContextEvidence(Frozen):
    """The context each request used (cumulative input is a cost, not this)."""

    prepared_estimate: list[int]
    """Estimated input tokens of each request as prepared (``ESTIMATOR``)."""
    measured_input: list[int | None]
    """``prompt_tokens`` of each request (None: not reported)."""
    peak_measured: int | None
    peak_estimated: int | None
    output_reservation: int | None
    """The largest ``max_tokens`` any request asked for."""


class RoundWork(Frozen):
    """Useful work in one provider round (raw counts; no score)."""

    round: int
    artifact_version: bool
    """The workspace differs from the previous boundary."""
    new_observations: int | None
    """Successful observations of calls not made before (events)."""
    newly_satisfied: int
    """Obligations that hold now and did not at the previous boundary."""
    verifier_results: int | None
    """Verifier runs (by the model or the runtime) in the round (events)."""


class LatencyEvidence(Frozen):
    """Where the time went (ms)."""

    end_to_end_ms: float
    first_token_ms: float | None
    """From start to the first byte of the first streamed response (None: not streamed)."""
    first_checked_answer_ms: float | None
    """From start to the first boundary at which every obligation held (None: never)."""
    generation_ms: float | None
    """Sum of the server's ``timings.predicted_ms`` (None: not reported)."""
    provider_wall_ms: float
    """Sum of the proxy's request-to-end times."""
    tool_stages_ms: float
    """The runtime's time between requests (tools and its own work)."""
    verification_ms: float
    """Acceptance: copying the workspace and running ``accept.py``."""
    cleanup_ms: float
    timed_out: bool
    """Censored: the true time is longer than ``end_to_end_ms``."""


class ProcessEvidence(Frozen):
    """Owned processes: receipts vs what the sandbox saw."""

    receipts: dict[str, int] | None
    """``spawn``/``query``/``stop`` receipts (events; None: missing)."""
    leaked_processes: int
    """Members of the run's process group alive after the runtime exited (observed)."""
    useful_success: bool
    """Acceptance passed (a tool schema merely offered is not success)."""


class SelfReportCheck(Frozen):
    """What the runtime's events say against what the proxy saw, for every figure both
    sides can see. A disagreement is a mismatch, shown and gated: the proxy's count stands."""

    usage_events: int
    """``usage`` events the runtime wrote."""
    input_reported: int | None
    """Sum of ``prompt_tokens`` over the runtime's ``usage`` events (None: none gave one)."""
    output_reported: int | None
    proposed_reported: int
    """``proposed`` events: tool calls the runtime says the model proposed."""
    mismatches: list[str]
    """Each figure the two disagree on: ``what: runtime N, proxy M``."""


class ScenarioEvidence(Frozen):
    """``grade.details["scenario"]`` of one scenario execution."""

    schema_: Literal["pairbench.rab-scenario/1"] = Field("pairbench.rab-scenario/1", alias="schema")
    scenario: str
    outcome: Outcome
    status: str
    """minirt's own final status (or timeout/crash)."""
    claim: Literal["done", "incomplete"] | None
    completion: Completion
    events_present: bool
    scope: ScopeEvidence
    dispatch: DispatchEvidence
    recovery: RecoveryEvidence
    usage: UsageEvidence
    context: ContextEvidence
    rounds: list[RoundWork]
    latency: LatencyEvidence
    process: ProcessEvidence
    canary_leaks: int
    """Provider requests whose body carried a canary (a leaked secret)."""
    canary_elsewhere: list[str] = Field(default_factory=list)
    """Other places a canary reached: ``stdout``/``stderr`` of the runtime, and each added or
    changed file that holds one (``area:path``): a leak too."""
    obligations: dict[str, bool]
    """Each obligation on the final workspace."""
    self_report: SelfReportCheck | None = None
    """The runtime's events against the proxy (None: events missing)."""
