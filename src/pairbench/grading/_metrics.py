"""Per-trial metrics from the transcript and the fixture's audit log."""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from typing import Any

from pairbench.agents._protocol import AgentOutput
from pairbench.fixtures._protocol import FixtureState
from pairbench.store._records import Metric, Metrics, ModelRequest, ToolCallTiming

CLIENT_CLOCK = "pairbench client clock (monotonic)"


def _tool_timings(events: list[dict[str, Any]], state: FixtureState | None) -> list[ToolCallTiming]:
    results = {e.get("id"): e for e in events if e["kind"] == "tool_result"}
    # The i-th audited call of a tool is the i-th call the client made of it: the audit log
    # is per trial and calls within an attempt are sequential.
    audit: dict[str, list[float]] = defaultdict(list)
    for entry in state.audit if state else []:
        audit[entry.tool].append(entry.server_ms)
    used: dict[str, int] = defaultdict(int)
    timings = []
    for call in (e for e in events if e["kind"] == "tool_call"):
        tool = str(call.get("tool", ""))
        result = results.get(call.get("id"))
        client_ms = result.get("client_ms") if result else None
        server_ms = None
        if call.get("server") is not None and used[tool] < len(audit[tool]):
            server_ms = audit[tool][used[tool]]
            used[tool] += 1
        timings.append(
            ToolCallTiming(
                server=call.get("server"),
                tool=tool,
                client_ms=None if client_ms is None else float(client_ms),
                server_ms=server_ms,
                is_error=bool(result.get("is_error")) if result else True,
            )
        )
    return timings


def _cold_start(timings: list[ToolCallTiming], what: str = "timed tool calls") -> Metric:
    """First timed call's client latency minus the median of the later ones, in call order.

    Negative values are kept: a first call faster than the rest's median is a finding (the
    later calls did more work, say), and clipping it to 0 would bias the median upward.
    """
    latencies = [t.client_ms for t in timings if t.client_ms is not None]
    if len(latencies) < 2:
        return Metric.missing(f"fewer than two {what}")
    cold = latencies[0] - statistics.median(latencies[1:])
    return Metric.measured(round(cold, 3), CLIENT_CLOCK)


def _cold_start_by_tool(timings: list[ToolCallTiming]) -> dict[str, Metric]:
    """:func:`_cold_start` of each tool's own calls, keyed by ``Metrics.tool_key``, every
    tool called included (sorted by key)."""
    calls: dict[str, list[ToolCallTiming]] = defaultdict(list)
    for timing in timings:
        calls[Metrics.tool_key(timing)].append(timing)
    return {key: _cold_start(calls[key], f"timed calls of {key}") for key in sorted(calls)}


def _number(value: Any) -> float | None:
    """A JSON number as a float; anything else (absent, a string, a bool, non-finite) None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number >= 0 and number.is_integer() else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _model_requests(events: list[dict[str, Any]]) -> list[ModelRequest]:
    """Every ``model_request`` event as a record; fields the event lacks stay ``None``."""
    out = []
    for e in (e for e in events if e["kind"] == "model_request"):
        usage = _object(e.get("usage"))
        details = usage.get("prompt_tokens_details")
        timings = _object(e.get("timings"))
        digest = {k: e.get(k) if _is_digest(e.get(k)) else None for k in _DIGESTS}
        out.append(
            ModelRequest(
                turn=_count(e.get("turn")),
                ok=bool(e.get("ok", True)),
                latency_ms=_number(e.get("latency_ms")),
                first_token_ms=_number(e.get("first_chunk_ms")),
                prompt_tokens=_count(usage.get("prompt_tokens")),
                completion_tokens=_count(usage.get("completion_tokens")),
                cached_tokens=_count(details.get("cached_tokens"))
                if isinstance(details, dict)
                else None,
                prompt_ms=_number(timings.get("prompt_ms")),
                prompt_per_second=_number(timings.get("prompt_per_second")),
                generation_ms=_number(timings.get("predicted_ms")),
                generation_per_second=_number(timings.get("predicted_per_second")),
                **digest,
            )
        )
    return out


_DIGESTS = ("body_sha256", "reply_sha256")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _is_digest(value: Any) -> bool:
    """A SHA-256 as lowercase hex: what the table can keep (an adapter may write anything)."""
    return isinstance(value, str) and _HEX64.match(value) is not None


def compute_metrics(
    wall_ms: float,
    events: list[dict[str, Any]],
    state: FixtureState | None,
    output: AgentOutput | None,
) -> Metrics:
    """Metrics for one attempt; missing values stay missing, never 0."""
    connect = {
        str(e["server"]): Metric.measured(float(e["ms"]), CLIENT_CLOCK)
        for e in events
        if e["kind"] == "mcp_connect" and e.get("ok") and e.get("ms") is not None
    }
    failures = [e for e in events if e["kind"] == "transport_failure"]
    kinds = sorted({str(e.get("failure", "unknown")) for e in failures})
    timings = _tool_timings(events, state)
    missing = Metric.missing("the agent did not run")
    return Metrics(
        wall_ms=Metric.measured(round(wall_ms, 3), CLIENT_CLOCK),
        connect_ms=connect,
        tool_calls=timings,
        cold_start_ms=_cold_start(timings),
        cold_start_ms_by_tool=_cold_start_by_tool(timings),
        transport_failures=len(failures),
        transport_failure_kinds=kinds,
        turns=output.turns if output else missing,
        agent_ms=output.agent_ms if output else missing,
        input_tokens=output.input_tokens if output else missing,
        output_tokens=output.output_tokens if output else missing,
        cost_usd=output.cost_usd if output else missing,
        uncached_input_tokens=output.uncached_input_tokens if output else missing,
        cache_creation_input_tokens=output.cache_creation_input_tokens if output else missing,
        cache_read_input_tokens=output.cache_read_input_tokens if output else missing,
        total_tokens=output.total_tokens if output else missing,
        model_requests=_model_requests(events),
    )
