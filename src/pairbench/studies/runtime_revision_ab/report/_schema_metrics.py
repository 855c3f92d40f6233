"""The protocol metric table of ``summary.json`` ``revision.metrics``: one row per arm.

A ``Count`` is a sum with its denominator: how many executions (or rounds) reported the
value, of how many. ``total`` is `null` when none did: missing, never 0.
"""

from __future__ import annotations

from pairbench.report.summary._schema_pairs import Record


class Count(Record):
    """A sum over the items that reported a value (self-reported counts may be missing)."""

    total: int | None
    """Sum over the items that reported it; `null` when none did."""
    reported: int
    """Items that reported it."""
    of: int
    """Items there were."""


class Counts(Record):
    """Counts by key (error category, receipt kind), summed over the items reporting them."""

    counts: dict[str, int] | None
    """Key -> sum; `null` when no item reported (runtime events missing)."""
    reported: int
    """Items that reported."""
    of: int
    """Items there were."""


class Scope(Record):
    """Scope compliance from filesystem snapshots. A denial is not an effect."""

    allowed_changes: int
    """Workspace changes inside the scenario's allowed scope."""
    unauthorized_effects: int
    """Every other change (workspace or perimeter): unauthorized effects."""
    executions_with_unauthorized: int
    """Executions with at least one unauthorized effect."""
    prohibited_attempted: Count
    """Proposed calls matching a prohibited operation (runtime events)."""
    prohibited_executed: int
    """Prohibited operations that happened (seen in the filesystem)."""
    denials: Count
    """Calls the runtime denied (runtime events)."""


class Dispatch(Record):
    """Tool dispatch as separate counts; `tool_start` alone counts nothing."""

    proposed: int
    """Tool calls in the model's responses (proxy)."""
    normalized: Count
    """Calls the runtime turned into an operation (events)."""
    authorized: Count
    """Calls the runtime allowed (events)."""
    denied: Count
    """Calls the runtime denied (events)."""
    executed: Count
    """Calls with an execution receipt (events)."""
    observed: int
    """Proposed calls whose result reached the model in a later request (proxy)."""
    effects_without_receipt: Count
    """Workspace changes no receipt names (events)."""


class Completion(Record):
    """Verified completion classes; acceptance never grounds an earlier claim."""

    counts: dict[str, int]
    """verified, unsupported_claim, false_claim, honest_incomplete, no_claim -> executions."""
    claims: int
    """Executions whose runtime made a final claim (done or incomplete)."""
    of: int
    """Executions with evidence."""


class Recovery(Record):
    """Errors by category and what followed them (runtime events)."""

    errors: Counts
    """Category (diagnostic, denial, invalid_arguments, missing_resource, browser_timeout,
    backend, infrastructure, other) -> failed observations."""
    transitions_to_new_evidence: Count
    """Errors followed by a successful observation of a call not seen before."""
    recovered_to_success: int
    """Executions with an error that still passed acceptance."""
    executions_with_errors: int
    """Executions with at least one error (events present): the denominator above."""
    repeated_identical_calls: Count
    """Calls repeating an earlier call exactly: not progress."""


class Usage(Record):
    """Measured (proxy usage) and estimated tokens, never summed together."""

    requests: int
    """Provider requests (every request, retry and helper call)."""
    measured_requests: int
    """Requests whose response carried usage: coverage `measured_requests/requests`."""
    input_measured: int | None
    """Sum of prompt tokens over measured requests only; `null` when none was measured."""
    output_measured: int | None
    """Sum of completion tokens over measured requests only."""
    executions_fully_measured: int
    """Executions every request of which carried usage (one with no request counts)."""
    input_estimated: int | None
    """Estimated input tokens over every request (`estimators`); never added to measured."""
    output_estimated: Count
    """Estimated output tokens, over executions whose replies were kept."""
    estimators: list[str]
    """Estimator and version of the estimates."""


class Spread(Record):
    """Per-request token counts: how many, peak, median and 90th percentile (nearest rank)."""

    n: int
    """Requests with a value."""
    peak: float | None
    """The largest; `null` without values."""
    median: float | None
    """The median."""
    p90: float | None
    """The 90th percentile by nearest rank (an observed value)."""


class Context(Record):
    """The context each request used; cumulative input is a cost, not a context."""

    requests: int
    """Requests prepared."""
    measured: Spread
    """Measured prompt tokens per request (`n` of `requests` reported)."""
    prepared_estimate: Spread
    """The prepared input's estimate per request."""
    capacity: int | None
    """The server's context per slot (run.json `identities.model_endpoint.n_ctx`)."""
    output_reservation: int | None
    """The largest `max_tokens` a request reserved."""


class Rounds(Record):
    """Useful work per provider round: raw counts, no score."""

    rounds: int
    """Provider rounds."""
    artifact_versions: int
    """Rounds after which the workspace differed from the previous boundary."""
    new_observations: Count
    """Successful observations of calls not made before, over rounds (events)."""
    newly_satisfied: int
    """Obligations newly holding at a round's boundary."""
    verifier_results: Count
    """Verifier runs, over rounds (events)."""


class Stage(Record):
    """One latency stage over executions."""

    reported: int
    """Executions that reported it."""
    of: int
    """Executions."""
    sum_ms: float | None
    """Sum over those that reported it; `null` when none did."""
    median_ms: float | None
    """Median over those that reported it."""


class EndToEnd(Record):
    """End-to-end scenario time; a timeout censors it (the true time is longer)."""

    n: int
    """Executions."""
    censored: int
    """Executions that timed out."""
    sum_ms: float | None
    """Sum of recorded times (a lower bound when `censored` > 0)."""
    median_ms: float | None
    """Median; `null` when censoring reaches it."""
    median_display: str | None
    """The median for people: a number, or "> limit"."""


class Latency(Record):
    """Where the time went."""

    end_to_end: EndToEnd
    """End to end."""
    first_token: Stage
    """Provider first token (only for streamed responses)."""
    streamed: bool
    """Any response was streamed; false: first token reads "not streamed"."""
    first_checked_answer: Stage
    """First boundary at which every obligation held (`reported` = executions that reached one)."""
    generation: Stage
    """The server's reported generation time."""
    provider_wall: Stage
    """The proxy's request-to-end time."""
    tool_stages: Stage
    """The runtime's time between requests."""
    verification: Stage
    """Acceptance."""
    cleanup: Stage
    """Cleanup."""


class Process(Record):
    """Owned-process receipts vs what the sandbox observed."""

    receipts: Counts
    """spawn/query/stop receipts (events)."""
    leaked_processes: int
    """Processes alive after the runtime exited."""
    executions_with_leaks: int
    """Executions that leaked any."""
    useful_success: int
    """Executions whose acceptance passed (a tool schema merely offered is not success)."""


class Canary(Record):
    """Leaked secrets: provider requests whose body carried a canary."""

    leaking_requests: int
    """Requests carrying a canary."""
    executions_with_leaks: int
    """Executions with any."""
    elsewhere: int
    """Outputs (stdout, stderr) and added or changed files that carried a canary."""
    executions_leaking_elsewhere: int
    """Executions with any of those."""


class InfraAttempt(Record):
    """One attempt kept under `infra/`."""

    task: str
    """The task."""
    pair: int
    """The campaign pair (trial)."""
    attempt: int
    """The attempt number."""
    reason: str
    """Why it failed (as recorded)."""
    result: str
    """Its record, relative to the run folder."""


class Infrastructure(Record):
    """Infrastructure events: unscored, every occurrence reported."""

    final_infra: int
    """Final records whose outcome is infra."""
    kept_attempts: int
    """Attempts kept under `infra/` (replaced by a retry, or not)."""
    interference: dict[str, int]
    """Attempts per interference verdict around them (`clean`, `interference`,
    `unexplained`, `unavailable`): the server's `/metrics` against what the proxy forwarded.
    Empty without a proxy."""
    peak_host_load: float | None
    """The highest 1-minute load average seen right after an attempt (null: not recorded)."""
    attempts: list[InfraAttempt]
    """Each kept attempt."""


class ArmMetrics(Record):
    """One arm's row of the protocol's metric table, over its final executions."""

    arm: str
    """The arm."""
    executions: int
    """Final records of the arm."""
    with_evidence: int
    """Of them, those with scenario evidence: the denominator of most rows."""
    events_present: int
    """Executions whose runtime events were present (self-reported counts need them)."""
    scope: Scope
    """Scope compliance."""
    dispatch: Dispatch
    """Tool dispatch."""
    completion: Completion
    """Verified completion."""
    recovery: Recovery
    """Recovery."""
    usage: Usage
    """Measured and estimated usage."""
    context: Context
    """Context."""
    rounds: Rounds
    """Useful work per round."""
    latency: Latency
    """Latency."""
    process: Process
    """Process reliability."""
    canary: Canary
    """Leaked secrets."""
    infrastructure: Infrastructure
    """Infrastructure events."""
