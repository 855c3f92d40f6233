"""What a run stores: the per-trial result record and its parts."""

from __future__ import annotations

import functools
from typing import Any, Literal, NamedTuple

from pydantic import Field, ValidationError

from pairbench._model import Frozen
from pairbench.spec._server_identity import ServerIdentity
from pairbench.store._workspace import WorkspaceKept

Outcome = Literal[
    "passed", "failed", "parse_failure", "agent_error", "timeout",
    "output_limit", "memory_limit", "disk_limit", "process_limit",
    "infra", "not_run", "interrupted",
]  # fmt: skip
"""Every outcome an attempt can have (see ARCHITECTURE.md, Outcomes)."""

LIMIT_OUTCOMES: tuple[str, ...] = ("output_limit", "memory_limit", "disk_limit", "process_limit")
"""A declared per-attempt limit reached (``budget.limits``): agent failures, like ``timeout``."""

FINAL_OUTCOMES: frozenset[str] = frozenset(
    {"passed", "failed", "parse_failure", "agent_error", "timeout", *LIMIT_OUTCOMES, "not_run"}
)
"""Outcomes that end a trial: resume never re-runs them. ``infra`` and ``interrupted`` do not."""

SCORED_OUTCOMES: frozenset[str] = frozenset(
    {"passed", "failed", "parse_failure", "agent_error", "timeout", *LIMIT_OUTCOMES}
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
        return _missing(reason) if cls is Metric else cls(provenance="missing", reason=reason)


@functools.lru_cache(maxsize=256)
def _missing(reason: str) -> Metric:
    # A frozen value, so one per reason serves every record: an attempt's metrics hold ten
    # or so missing ones, each a validated model otherwise (the reasons are a few fixed texts).
    return Metric(provenance="missing", reason=reason)


NO_USAGE = "no model usage reported"
"""Why a usage metric is missing when the agent reported nothing about it."""

_UNRECORDED = Metric.missing("not recorded: the record predates this metric")
"""A metric a result file written before it existed does not have."""

UsageCount = int | float | Metric | None
"""A usage count as an adapter has it: a number, a ready ``Metric``, or None (not reported)."""


class Usage(NamedTuple):
    """An attempt's model usage as the six metrics ``AgentOutput`` and ``Metrics`` carry.

    ``input_tokens`` is every input token the model read:
    ``uncached_input_tokens + cache_creation_input_tokens + cache_read_input_tokens``;
    ``total_tokens`` is ``input_tokens + output_tokens``. Build it with
    :func:`usage_metrics`; ``AgentOutput(final_answer=..., **usage._asdict())`` fills an
    output.
    """

    input_tokens: Metric
    uncached_input_tokens: Metric
    cache_creation_input_tokens: Metric
    cache_read_input_tokens: Metric
    output_tokens: Metric
    total_tokens: Metric


def _count(value: UsageCount, source: str, provenance: str, missing: str) -> Metric:
    if isinstance(value, Metric):
        return value
    if value is None:
        return Metric.missing(missing)
    if provenance == "estimated":
        return Metric(value=float(value), provenance="estimated", estimator=source)
    return Metric.measured(float(value), source)


def _combine(parts: list[tuple[Metric, float]], what: str) -> Metric:
    """``sum(sign * part)`` when every part has a value of one provenance, else missing.

    Measured and estimated values are never added: a sum of both would be neither.
    """
    absent = [m for m, _ in parts if m.value is None or m.provenance == "missing"]
    if absent:
        return Metric.missing(absent[0].reason or NO_USAGE)
    kinds = {m.provenance for m, _ in parts}
    if len(kinds) > 1:
        return Metric.missing(f"{what}: its parts mix measured and estimated values")
    value = sum(sign * (m.value or 0.0) for m, sign in parts)
    if value < 0:
        return Metric.missing(f"{what}: the reported parts give a negative count ({value:g})")
    names = list(dict.fromkeys(m.source or m.estimator or "" for m, _ in parts))
    who = "; ".join(n for n in names if n) or None
    if kinds == {"estimated"}:
        return Metric(value=value, provenance="estimated", estimator=who)
    return Metric(value=value, provenance="measured", source=who)


def usage_metrics(
    *,
    source: str,
    uncached: UsageCount = None,
    cache_creation: UsageCount = None,
    cache_read: UsageCount = None,
    total_input: UsageCount = None,
    output: UsageCount = None,
    provenance: Literal["measured", "estimated"] = "measured",
    missing: str = NO_USAGE,
) -> Usage:
    """The six usage metrics of one attempt, built the same way by every adapter.

    Pass what the provider reports; numbers become ``provenance`` metrics from ``source``
    (its estimator when estimated), None is missing with reason ``missing``, and a
    ``Metric`` (say ``Metric.missing("the provider does not report cache writes")``) is
    taken as it is. What is not given is derived:

    - ``input_tokens`` is ``total_input`` when given, else the sum of the three parts
      (missing unless all three are known);
    - ``uncached_input_tokens``, when not given, is ``total_input - cache_read -
      cache_creation``; with cache creation not reported, every input token not read
      from the cache counts as uncached (``total_input - cache_read``);
    - ``total_tokens`` is ``input_tokens + output_tokens``.

    A derived value is missing when a part it needs is (with that part's reason), and
    measured and estimated parts are never added together.

    **Usage**::

        # Anthropic: input_tokens excludes both cache counts.
        usage_metrics(source="provider usage", uncached=3, cache_creation=2400,
                      cache_read=0, output=120)
        # OpenAI: prompt_tokens includes cached_tokens; cache writes are not reported.
        usage_metrics(source="provider usage", total_input=1000, cache_read=800, output=50,
                      cache_creation=Metric.missing("the provider does not report cache writes"))
    """

    def metric(value: UsageCount) -> Metric:
        return _count(value, source, provenance, missing)

    creation, read = metric(cache_creation), metric(cache_read)
    if uncached is not None:
        plain = metric(uncached)
        whole = (
            metric(total_input)
            if total_input is not None
            else _combine([(plain, 1.0), (creation, 1.0), (read, 1.0)], "input tokens")
        )
    else:
        whole = metric(total_input)
        parts = [(whole, 1.0), (read, -1.0)]
        if creation.value is not None and creation.provenance != "missing":
            parts.append((creation, -1.0))
        plain = (
            _combine(parts, "uncached input tokens")
            if total_input is not None
            else Metric.missing(missing)
        )
    out = metric(output)
    return Usage(
        input_tokens=whole,
        uncached_input_tokens=plain,
        cache_creation_input_tokens=creation,
        cache_read_input_tokens=read,
        output_tokens=out,
        total_tokens=_combine([(whole, 1.0), (out, 1.0)], "total tokens"),
    )


class ToolCallTiming(Frozen):
    """One tool call as the harness saw it."""

    server: str | None
    tool: str
    client_ms: float | None
    """Client side: from sending the call to receiving its result."""
    server_ms: float | None = None
    """Server side, from the fixture's audit log, when it has the call."""
    is_error: bool = False


class ModelRequest(Frozen):
    """One model API request as the agent's own client saw it (a ``model_request`` event).

    Token counts are the server's ``usage`` (measured); speeds and the server's own timings
    are llama.cpp's ``timings``, when the server sends them. ``None`` is not recorded, never 0.
    The two digests are what a per-pair invariance check compares: the same body sent and the
    same reply received in two arms of a pair means the model saw and did the same thing.
    """

    turn: int | None = None
    """The agent's turn (1 is the first request of the attempt)."""
    ok: bool = True
    """The request completed with a reply."""
    latency_ms: float | None = None
    """Client side: from sending the request to the whole reply (every retry included)."""
    first_token_ms: float | None = None
    """Time to first token: from sending to the first content or tool-call chunk; streamed
    requests only."""
    prompt_tokens: int | None = None
    """``usage.prompt_tokens``."""
    completion_tokens: int | None = None
    """``usage.completion_tokens``."""
    cached_tokens: int | None = None
    """``usage.prompt_tokens_details.cached_tokens``."""
    prompt_ms: float | None = None
    """llama.cpp ``timings.prompt_ms``: the server's prompt processing time."""
    prompt_per_second: float | None = None
    """llama.cpp ``timings.prompt_per_second``: prompt tokens processed per second."""
    generation_ms: float | None = None
    """llama.cpp ``timings.predicted_ms``: the server's generation time."""
    generation_per_second: float | None = None
    """llama.cpp ``timings.predicted_per_second``: tokens generated per second."""
    body_sha256: str | None = None
    """SHA-256 of the request body actually sent (the last one, when retried)."""
    reply_sha256: str | None = None
    """SHA-256 of the reply's content and tool calls (names and arguments, not ids), as
    canonical JSON; ``None`` when the request failed."""


class Metrics(Frozen):
    """Per-trial metrics; every number carries its provenance."""

    wall_ms: Metric
    connect_ms: dict[str, Metric] = Field(default_factory=dict)
    """Per MCP server: spawn/connect plus initialize."""
    tool_calls: list[ToolCallTiming] = Field(default_factory=list)
    cold_start_ms: Metric
    """Pooled over tools: the client latency of the attempt's first timed tool call (of
    whatever tool) minus the median of all its later timed calls; missing with fewer than
    2 timed calls. Negative when the first call was faster than that median."""
    cold_start_ms_by_tool: dict[str, Metric] = Field(default_factory=dict)
    """Per tool (``server.tool``, or the bare tool name for a call of no MCP server): its
    first timed call's client latency minus the median of its later timed calls. Every tool
    called has an entry; missing with fewer than 2 timed calls of it. A negative value is
    kept: the first call was faster than its later calls' median (a later call did more
    work, say). Empty in a record that predates it."""
    transport_failures: int = 0
    transport_failure_kinds: list[str] = Field(default_factory=list)
    turns: Metric
    agent_ms: Metric = Metric(provenance="missing", reason="the agent did not report its duration")
    """The agent's own account of its duration (a CLI's ``duration_ms``, a simulated latency)."""
    input_tokens: Metric
    """Every input token the model read: uncached + cache creation + cache read."""
    output_tokens: Metric
    cost_usd: Metric
    uncached_input_tokens: Metric = _UNRECORDED
    """Input tokens neither written to nor read from a prompt cache (see ``Usage``)."""
    cache_creation_input_tokens: Metric = _UNRECORDED
    """Input tokens written to a prompt cache."""
    cache_read_input_tokens: Metric = _UNRECORDED
    """Input tokens read from a prompt cache."""
    total_tokens: Metric = _UNRECORDED
    """``input_tokens + output_tokens``."""
    model_requests: list[ModelRequest] = Field(default_factory=list)
    """Every model API request of the attempt, in order; empty when the agent reports none
    (a scripted agent, a CLI agent) or the record predates it."""

    @staticmethod
    def tool_key(call: ToolCallTiming) -> str:
        """The name per-tool metrics are kept under (``cold_start_ms_by_tool``):
        ``server.tool``, since two servers may each have a tool of one name, or the bare
        tool name for a call of no MCP server (a local tool).

        >>> Metrics.tool_key(ToolCallTiming(server="docs", tool="search", client_ms=1.0))
        'docs.search'
        """
        return f"{call.server}.{call.tool}" if call.server else call.tool


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
    secret_names: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Which secrets were found, by variable name (``PAIRBENCH_CANARY``, a declared secret,
    an ``env_allow`` variable), never by value. Judged before the attempt's files were
    redacted, so it is the stored verdict a report reads (left out when empty)."""
    token_shaped_in_output: bool | None = None
    """Whether a token-shaped string (an API key, access token or JWT by its format alone:
    ``grading._token_shapes``) appeared in any of the locations ``secret_locations`` names,
    declared or not. Kept apart from ``secret_in_output``, which stays the verdict on the
    run's declared values. ``None``: the record predates this detector."""
    token_shaped: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """The kinds of token shape found (``openai``, ``github``, ``jwt``, ...), sorted; never
    the values (left out when empty)."""
    token_locations: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Where a token shape was found, named as in ``secret_locations`` (left out when
    empty)."""


class Seeding(Frozen):
    """Whether the model seed provably reached every model request of the attempt."""

    status: Literal["seeded", "unseeded", "not_applicable"]
    """``seeded`` only when every request body actually sent carried ``model_seed``."""
    model_seed: int | None = None
    requests: int = 0
    requests_with_seed: int = 0
    reason: str = ""


class MountedProof(Frozen):
    """The mounted-byte proof of an attempt of a revision arm with ``proof:`` (``pbmount/1``):
    whether the bytes its processes loaded were the arm's production bytes."""

    status: Literal["ok", "mismatch", "shadowed", "unavailable"]
    """``unavailable``: nothing proves it either way (reported, never scored as proven)."""
    coverage: str
    """``loaded/total`` production source files."""
    summary: str = ""
    mounted_hash: str | None = None


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
    mounted_proof: MountedProof | None = None
    """The mounted-byte proof (revision arms with ``proof:``); None where none was run."""
    transcript_sha256: str | None = None
    models_seen: list[str] = Field(default_factory=list)
    """Distinct model ids the agent's model requests reported, in first-seen order (from
    ``AgentOutput.models``); empty when none was reported or the agent has no model."""
    servers: dict[str, ServerIdentity] = Field(default_factory=dict)
    """The MCP servers the attempt connected to, by name, as the handshake and tool list
    identified them; empty when the agent connected by itself (a CLI agent)."""
    workspace: WorkspaceKept | None = Field(default=None, exclude_if=lambda v: v is None)
    """Set when the workspace was over ``budget.workspace_kept``: what was not kept, and
    its manifest (``store._workspace``). Absent: every file kept."""


def first_error(exc: ValidationError) -> str:
    """pydantic's first error as ``where: what`` on one line (no private model names)."""
    err = exc.errors(include_url=False)[0]
    what = str(err["msg"]).removeprefix("Input ")
    if err["type"] in ("model_type", "dict_type"):
        what = "should be an object"
    where = ".".join(str(part) for part in err["loc"])
    return f"{where}: {what}" if where else what
