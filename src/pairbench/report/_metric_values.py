"""Per-trial metric values for paired comparisons: measured only, with timeouts as censored.

Each metric of a trial is one of: a measured value; an estimated value (kept apart, never
mixed into a measured median); missing (never 0); or censored (the trial timed out, so the
true value is at least the recorded one).
"""

from __future__ import annotations

from typing import NamedTuple

from pairbench.analysis import median
from pairbench.store._records import Metric, TrialResult


class MetricInfo(NamedTuple):
    """A metric the report compares between arms."""

    label: str
    unit: str
    timed: bool
    """A duration of the whole trial: a timeout censors it at the trial timeout."""


METRICS: dict[str, MetricInfo] = {
    "wall_ms": MetricInfo("Wall time", "ms", True),
    "tool_client_ms": MetricInfo("Per-trial median tool-call client latency", "ms", False),
    "agent_ms": MetricInfo("Agent-reported duration", "ms", True),
    "input_tokens": MetricInfo("Input tokens", "tokens", False),
    "output_tokens": MetricInfo("Output tokens", "tokens", False),
    "cost_usd": MetricInfo("Cost", "USD", False),
}


class Value(NamedTuple):
    """One trial's value of one metric."""

    value: float | None
    """The measured value (for a censored one, its lower bound); None when not measured."""
    censored: bool
    """The trial timed out: the true value is at least ``value``."""
    estimated: bool
    """Only an estimate exists (kept apart: ``value`` is None)."""


MISSING = Value(None, False, False)


def _tool_client_median(r: TrialResult) -> Metric | None:
    if r.metrics is None:
        return None
    values = [c.client_ms for c in r.metrics.tool_calls if c.client_ms is not None]
    # Client-side call latency is pairbench's own clock: measured whenever a call was timed.
    return Metric.measured(median(values), "pairbench client clock") if values else None


def metric_value(r: TrialResult, name: str, limit_ms: float | None) -> Value:
    """The value of metric ``name`` in trial ``r``.

    A timed-out trial is censored. For a whole-trial duration (``wall_ms``, ``agent_ms``)
    with a known trial timeout ``limit_ms``, the value is the limit itself: the trial ran
    until it, and a duration the agent did not report is still known to reach it. Any
    other metric of a timed-out trial keeps its recorded value as a lower bound.
    """
    timed_out = r.outcome == "timeout"
    if timed_out and METRICS[name].timed and limit_ms is not None:
        return Value(limit_ms, True, False)
    if name == "tool_client_ms":
        m = _tool_client_median(r)
    else:
        m = getattr(r.metrics, name) if r.metrics is not None else None
    if m is None or m.value is None or m.provenance == "missing":
        return MISSING
    if m.provenance == "estimated":
        return Value(None, False, True)
    return Value(m.value, timed_out, False)
