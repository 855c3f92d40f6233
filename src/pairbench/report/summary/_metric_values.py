"""Per-trial metric values for paired comparisons: measured only, with timeouts as censored.

Each metric of a trial is one of: a measured value; an estimated value (kept apart, never
mixed into a measured median); missing (never 0); or censored (the trial timed out, so the
true value is at least the recorded one).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from pairbench.store._table import TrialTable


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
    "turns": MetricInfo("Turns", "turns", False),
    "input_tokens": MetricInfo("Input tokens", "tokens", False),
    "uncached_input_tokens": MetricInfo("Uncached input tokens", "tokens", False),
    "cache_creation_input_tokens": MetricInfo("Cache-creation input tokens", "tokens", False),
    "cache_read_input_tokens": MetricInfo("Cache-read input tokens", "tokens", False),
    "output_tokens": MetricInfo("Output tokens", "tokens", False),
    "total_tokens": MetricInfo("Total tokens", "tokens", False),
    "cost_usd": MetricInfo("Cost", "USD", False),
}
"""Compared between arms, in this order. Input tokens are every input token the model read
(uncached + cache creation + cache read); total tokens are input + output."""


class Values(NamedTuple):
    """One metric over every row of a trial table."""

    value: npt.NDArray[np.float64]
    """The measured value (for a censored one, its lower bound); NaN when not measured."""
    censored: npt.NDArray[np.bool_]
    """The trial timed out: the true value is at least ``value``."""
    estimated: npt.NDArray[np.bool_]
    """Only an estimate exists (kept apart: ``value`` is NaN)."""


def metric_values(table: TrialTable, name: str, limit_ms: float | None) -> Values:
    """Metric ``name`` of every row of ``table``.

    A timed-out trial is censored. For a whole-trial duration (``wall_ms``, ``agent_ms``)
    with a known trial timeout ``limit_ms``, the value is the limit itself: the trial ran
    until it, and a duration the agent did not report is still known to reach it. Any
    other metric of a timed-out trial keeps its recorded value as a lower bound. The
    per-trial median tool-call client latency is pairbench's own clock: measured whenever
    a call was timed.
    """
    cols = table.columns
    timed_out = table.is_value("outcome", "timeout")
    value = np.array(cols[name], dtype=np.float64)
    if name == "tool_client_ms":
        estimated = np.zeros(len(value), dtype=np.bool_)
    else:
        prov = cols[f"{name}_prov"]
        usable = ~np.isnan(value)
        estimated = usable & (prov == table.code_of(f"{name}_prov", "estimated"))
        measured = usable & (prov == table.code_of(f"{name}_prov", "measured"))
        value[~measured] = np.nan
    censored = timed_out & ~np.isnan(value)
    if METRICS[name].timed and limit_ms is not None:
        value[timed_out] = limit_ms
        censored = censored | timed_out
        estimated = estimated & ~timed_out
    return Values(value, censored, estimated)
