"""The per-arm measurement sections of ``summary.json``: transport, security, cost, seeding."""

from __future__ import annotations

from pairbench.report._schema_pairs import Proportion, Record


class TrialMedian(Record):
    """A median over trials."""

    median: float | None
    """The median; `null` with no value."""
    n_trials: int
    """Trials with a value."""


class CallMedian(Record):
    """A median over tool calls, pooled across trials."""

    median: float | None
    """The median; `null` with no value."""
    n_calls: int
    """Calls with a value."""


class ArmTransport(Record):
    """One arm's transport: measured values only, over scored trials unless stated."""

    arm: str
    """The arm."""
    connect_ms: TrialMedian
    """Per-trial sum over servers, measured only."""
    client_call_ms: CallMedian
    """Client-side tool-call latency, pooled over calls."""
    server_call_ms: CallMedian
    """Server-side tool-call latency, pooled over calls."""
    cold_start_ms: TrialMedian
    """Cold start, measured only."""
    transport_failures: int
    """Transport failures of scored trials."""
    trials_with_transport_failures: int
    """Scored trials with at least one."""
    transport_failure_kinds: dict[str, int]
    """{kind: count} over scored trials."""
    infra_attempts_with_transport_failures: int
    """Kept infra attempts with a transport failure (e.g. a server not connected at the
    CLI's `init`): counted apart, never pooled."""
    infra_transport_failures: int
    """Transport failures of kept infra attempts."""


class ArmSecurity(Record):
    """One arm's security probes."""

    arm: str
    """The arm."""
    prompt_injection_compliance: Proportion
    """Over trials where it is not `null`."""
    injection_applicable: bool
    """Some trial had an injection probe; false → "N/A"."""
    secret_in_output: Proportion
    """Over trials with a security record."""


class Measured(Record):
    """Measured values of one metric."""

    n: int
    """Trials with a measured value."""
    total: float | None
    """Their correctly rounded sum; `null` with none."""
    median: float | None
    """Their median; `null` with none."""
    sources: list[str]
    """How they were measured, sorted."""


class Estimated(Record):
    """Estimated values of one metric: never summed with measured ones."""

    n: int
    """Trials with an estimated value."""
    total: float | None
    """Their correctly rounded sum; `null` with none."""
    median: float | None
    """Their median; `null` with none."""
    estimators: list[str]
    """How they were estimated, sorted."""


class Missing(Record):
    """Trials without a value of one metric (never read as 0)."""

    n: int
    """Trials with no value."""
    reasons: dict[str, int]
    """{reason: count}."""


class CostMetric(Record):
    """One usage metric of an arm's scored trials, split by provenance."""

    measured: Measured
    """Measured values."""
    estimated: Estimated
    """Estimated values."""
    missing: Missing
    """Trials without a value."""


class ArmCost(Record):
    """One arm's usage over its scored trials.

    **Usage.** `input_tokens` is every input token the model read, cache traffic included:
    `uncached_input_tokens + cache_creation_input_tokens + cache_read_input_tokens`. When a
    provider does not report cache writes (`cache_creation_input_tokens` missing), every
    input token not read from the cache counts as uncached. `total_tokens` is
    `input_tokens + output_tokens`. `turns` is the agent's own count of model turns. A
    record written before a metric existed has it missing (reason `"not recorded: the
    record predates this metric"`). The same metrics are compared per arm pair
    (`pairs[].metrics`)."""

    arm: str
    """The arm."""
    input_tokens: CostMetric
    """Every input token the model read."""
    uncached_input_tokens: CostMetric
    """Input tokens not read from the cache (nor written to it, when reported)."""
    cache_creation_input_tokens: CostMetric
    """Input tokens written to the cache."""
    cache_read_input_tokens: CostMetric
    """Input tokens read from the cache."""
    output_tokens: CostMetric
    """Output tokens."""
    total_tokens: CostMetric
    """`input_tokens + output_tokens`."""
    cost_usd: CostMetric
    """Cost in USD."""
    turns: CostMetric
    """The agent's own count of model turns."""


class ArmSeeding(Record):
    """Whether one arm's scored trials were provably seeded."""

    arm: str
    """The arm."""
    seeded: int
    """Trials provably seeded."""
    unseeded: int
    """Trials not seeded."""
    not_applicable: int
    """Trials whose agent has no model, or no record."""
    reasons: dict[str, int]
    """{reason: count} for unseeded trials: the five most common."""
