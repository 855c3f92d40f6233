"""The ``model_requests`` part of ``summary.json``: each arm's model API requests, with the
server's own accounting (usage, llama.cpp ``timings``) and the client's clock."""

from __future__ import annotations

from pairbench.report.summary._schema_pairs import Record


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

    arm: str
    """The arm."""
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
