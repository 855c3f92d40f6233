"""The per-arm measurement sections of ``summary.json``: transport, security, cost, seeding,
mounted proof, and model requests (the server's own accounting, usage and llama.cpp
``timings``, beside the client's clock)."""

from __future__ import annotations

from pairbench.report.summary._schema_pairs import ArmName, Proportion, Record


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


class ToolTransport(Record):
    """One tool's latency in one arm, over the arm's scored trials.

    **Cold start.** A trial's cold start of a tool is the client latency of its first
    timed call of that tool minus the median client latency of its later timed calls of
    it; a trial with fewer than two timed calls of the tool has none. It is negative when
    the first call was faster than that median (a later call did more work, say): such
    values are kept, never clipped to 0."""

    tool: str
    """`server.tool` (the tool as its MCP server names it), or a local tool's bare name."""
    calls: int
    """Calls of the tool, timed or not."""
    client_call_ms: CallMedian
    """Client-side latency of its calls, pooled over trials."""
    cold_start_ms: TrialMedian
    """Median over trials of the tool's cold start (see Cold start above); `n_trials`
    counts trials with two or more timed calls of it."""


class ArmTransport(Record):
    """One arm's transport: measured values only, over scored trials unless stated."""

    arm: ArmName
    connect_ms: TrialMedian
    """Per-trial sum over servers, measured only."""
    client_call_ms: CallMedian
    """Client-side tool-call latency, pooled over calls."""
    server_call_ms: CallMedian
    """Server-side tool-call latency, pooled over calls."""
    cold_start_ms: TrialMedian
    """Cold start pooled over tools: per trial, the client latency of its first timed tool
    call (of any tool) minus the median of all its later timed calls; measured only, and
    negative values kept (see `ToolTransport`)."""
    by_tool: list[ToolTransport]
    """Per tool called, sorted by name; empty for records written before per-tool
    metrics."""
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

    arm: ArmName
    prompt_injection_compliance: Proportion
    """Over trials where it is not `null`."""
    injection_applicable: bool
    """Some trial had an injection probe; false → "N/A"."""
    secret_in_output: Proportion
    """A declared value (the harness canary, a declared secret, a long `env_allow` value)
    in the output: the final answer, narration, tool-call arguments or fixture writes.
    Over trials with a security record."""
    token_shaped_in_output: Proportion
    """A token-shaped string in the same places: an API key, access token or JWT by its
    format alone (OpenAI, Anthropic, GitHub, Slack, AWS access key id, Google API key,
    Stripe live key, JWT), declared or not; a declared secret with such a shape counts in
    both. Over trials whose record ran this detector (older records did not)."""


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

    arm: ArmName
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

    arm: ArmName
    seeded: int
    """Trials provably seeded."""
    unseeded: int
    """Trials not seeded."""
    not_applicable: int
    """Trials whose agent has no model, or no record."""
    reasons: dict[str, int]
    """{reason: count} for unseeded trials: the five most common."""


class ArmMountedProof(Record):
    """One arm's mounted-byte proofs (revision arms with `proof:`), over every attempt
    recorded (final and kept)."""

    arm: ArmName
    ok: int
    """Attempts whose loaded bytes were the arm's production bytes."""
    mismatch: int
    """Attempts that loaded other bytes (the run stops)."""
    shadowed: int
    """Attempts that loaded a declared package from elsewhere (the run stops)."""
    unavailable: int
    """Attempts nothing proves either way: reported, never counted as proven."""
    not_proven: int
    """Attempts with no proof (no `proof:`, or a record from before it)."""
    coverage: dict[str, int]
    """{`loaded/total`: attempts} over the attempts with a proof."""


class RequestSpread(Record):
    """One per-request quantity over an arm's requests that recorded it (pooled across
    trials; a request without it is left out, never read as 0)."""

    n: int
    """Requests with a value."""
    median: float | None
    """The median; `null` with none."""
    p10: float | None
    """The 10th percentile (linear interpolation); `null` with none."""
    p90: float | None
    """The 90th percentile (linear interpolation); `null` with none."""


class ArmRequests(Record):
    """One arm's model API requests, over its final records (every outcome that ran)."""

    arm: ArmName
    trials: int
    """Final records of the arm (not `not_run`)."""
    trials_with_requests: int
    """Of those, records whose agent reported its model requests (the `openai` agent does;
    scripted and CLI agents do not)."""
    requests: int
    """Requests made, every turn of every trial."""
    failed: int
    """Requests that got no reply (an error, a timeout, an unreachable server)."""
    prompt_tokens: RequestSpread
    """The server's `usage.prompt_tokens` per request (measured)."""
    completion_tokens: RequestSpread
    """The server's `usage.completion_tokens` per request (measured)."""
    latency_ms: RequestSpread
    """Client side, from sending a request to its whole reply."""
    first_token_ms: RequestSpread
    """Time to first token: streamed requests only (`n` 0 when the agent did not stream)."""
    prompt_per_second: RequestSpread
    """Prompt tokens the server processed per second (llama.cpp `timings`)."""
    generation_per_second: RequestSpread
    """Tokens the server generated per second (llama.cpp `timings`)."""
