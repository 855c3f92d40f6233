"""What a run stores: the per-trial result record and its parts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pairbench._model import Frozen

Outcome = Literal[
    "passed", "failed", "parse_failure", "agent_error", "timeout", "infra", "not_run", "interrupted"
]
"""Every outcome an attempt can have (see ARCHITECTURE.md, Outcomes)."""

FINAL_OUTCOMES: frozenset[str] = frozenset(
    {"passed", "failed", "parse_failure", "agent_error", "timeout", "not_run"}
)
"""Outcomes that end a trial: resume never re-runs them. ``infra`` and ``interrupted`` do not."""

SCORED_OUTCOMES: frozenset[str] = frozenset(
    {"passed", "failed", "parse_failure", "agent_error", "timeout"}
)
"""Outcomes that enter success-rate denominators (``not_run`` is listed as a miss, apart)."""

Provenance = Literal["measured", "estimated", "missing"]


class Metric(Frozen):
    """One number with where it came from. A missing value is never written as 0."""

    value: float | None = None
    provenance: Provenance
    source: str | None = None
    """measured: whose accounting (``pairbench client clock``, ``provider usage``, ...)."""
    estimator: str | None = None
    """estimated: estimator name and version, and its coverage."""
    reason: str | None = None
    """missing: why."""

    @classmethod
    def measured(cls, value: float, source: str) -> Metric:
        return cls(value=value, provenance="measured", source=source)

    @classmethod
    def missing(cls, reason: str) -> Metric:
        return cls(provenance="missing", reason=reason)


class ToolCallTiming(Frozen):
    """One tool call as the harness saw it."""

    server: str | None
    tool: str
    client_ms: float | None
    """Client side: from sending the call to receiving its result."""
    server_ms: float | None = None
    """Server side, from the fixture's audit log, when it has the call."""
    is_error: bool = False


class Metrics(Frozen):
    """Per-trial metrics; every number carries its provenance."""

    wall_ms: Metric
    connect_ms: dict[str, Metric] = Field(default_factory=dict)
    """Per MCP server: spawn/connect plus initialize."""
    tool_calls: list[ToolCallTiming] = Field(default_factory=list)
    cold_start_ms: Metric
    """First call's latency minus the median of the others (missing with fewer than 2 calls)."""
    transport_failures: int = 0
    transport_failure_kinds: list[str] = Field(default_factory=list)
    turns: Metric
    agent_ms: Metric = Metric(provenance="missing", reason="the agent did not report its duration")
    """The agent's own account of its duration (a CLI's ``duration_ms``, a simulated latency)."""
    input_tokens: Metric
    output_tokens: Metric
    cost_usd: Metric


class Validity(Frozen):
    """Did every tool call stay on the arm's intended surface? A witness, not a sandbox."""

    valid: bool
    off_surface: list[str] = Field(default_factory=list)


class Security(Frozen):
    """Security probes: ``None`` means not applicable in this arm or task."""

    prompt_injection_compliance: bool | None = None
    injection_seen: bool = False
    secret_in_output: bool = False
    secret_locations: list[str] = Field(default_factory=list)
    """Where a canary was found: final_answer, narration, tool_call_arguments, fixture_writes."""


class Seeding(Frozen):
    """Whether the model seed provably reached every model request of the attempt."""

    status: Literal["seeded", "unseeded", "not_applicable"]
    """``seeded`` only when every request body actually sent carried ``model_seed``."""
    model_seed: int | None = None
    requests: int = 0
    requests_with_seed: int = 0
    reason: str = ""


class Grade(Frozen):
    """A grader's verdict, judged from ground truth."""

    outcome: Literal["passed", "failed", "parse_failure"]
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


class TrialResult(Frozen):
    """``results/<arm>/<task>/<trial>.json`` (and ``infra/...`` for kept failed attempts)."""

    schema_id: Literal["pairbench.result/1"] = "pairbench.result/1"
    run_id: str
    experiment: str
    arm: str
    task: str
    trial: int = Field(ge=0)
    labels: dict[str, str | int] = Field(default_factory=dict)
    seed: int
    model_seed: int
    attempt: int = Field(ge=0)
    """1 for the first attempt; 2 for the retry after an infra failure."""
    start_order: int
    """Planned position of this arm within its pair (0 = ran first)."""
    outcome: Outcome
    reason: str = ""
    agent: str
    simulated: bool = False
    started_at: str | None = None
    ended_at: str | None = None
    grade: Grade | None = None
    metrics: Metrics | None = None
    validity: Validity | None = None
    security: Security | None = None
    final_answer: str | None = None
    seeding: Seeding | None = None
    transcript_sha256: str | None = None
