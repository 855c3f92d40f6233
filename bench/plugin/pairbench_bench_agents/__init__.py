"""Benchmark-only pairbench agents, registered through the ``pairbench.agents`` entry point.

They are found because ``bench/plugin`` is put on ``PYTHONPATH`` (or ``sys.path``): the
``pairbench_bench_agents-0.1.dist-info`` folder beside this package is a tiny, hand-made
distribution whose ``entry_points.txt`` names them, the same way ``tests/test_plugin.py``
installs a plugin wheel. Nothing is installed and ``pyproject.toml`` is untouched.

``bench-noop``   emits ``agent_start`` and ``final`` transcript events and answers ``PASS``.
``bench-sleep``  the same, after ``await asyncio.sleep(settings.sleep_s)`` (default 1 s).

When ``PAIRBENCH_BENCH_STAMPS`` names a file, the first agent start is written to it at
once (``time.time()``), and at exit the file gets ``{"first_start", "last_end", "n"}``:
the bench measures "process start to first trial" and the in-flight span from it.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import time
from typing import Any

from pairbench import AgentOutput, Metric

_STAMPS = os.environ.get("PAIRBENCH_BENCH_STAMPS")
_state: dict[str, Any] = {"first_start": None, "last_end": None, "n": 0}
_SPANS = bool(os.environ.get("PAIRBENCH_BENCH_SPANS"))
"""Also keep every agent's (start, end) in the stamps file: the timeline of a run's slots."""
if _SPANS:
    _state["spans"] = []


def _peak_rss_mb() -> float | None:
    """This process's peak RSS so far (``VmHWM``), read at the first trial: start-up memory."""
    try:
        with open("/proc/self/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _write() -> None:
    if _STAMPS:
        with open(_STAMPS, "w", encoding="utf-8") as fh:
            json.dump(_state, fh)


if _STAMPS:
    atexit.register(_write)


def _start() -> float:
    now = time.time()
    if _STAMPS and _state["first_start"] is None:
        _state["first_start"] = time.time()
        _state["first_start_peak_rss_mb"] = _peak_rss_mb()
        _write()
    return now


def _end(started: float) -> None:
    if _STAMPS:
        _state["last_end"] = time.time()
        _state["n"] += 1
        if _SPANS:
            _state["spans"].append((started, _state["last_end"]))


class NoopAgent:
    """Does nothing but answer: the harness's own cost per trial is all that is left."""

    uses_workdir = False  # in-process, as the built-in in-process adapters

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = dict(settings or {})

    async def run(self, ctx: Any) -> AgentOutput:
        started = _start()
        ctx.transcript.emit("agent_start", agent="bench-noop", arm=ctx.arm)
        ctx.transcript.emit("final", text="PASS")
        _end(started)
        return AgentOutput(final_answer="PASS", turns=Metric.measured(1, "bench-noop"))


class SleepAgent:
    """Waits ``sleep_s`` seconds (a stand-in for a slow model), then answers."""

    uses_workdir = False  # in-process, as the built-in in-process adapters

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = dict(settings or {})

    async def run(self, ctx: Any) -> AgentOutput:
        started = _start()
        ctx.transcript.emit("agent_start", agent="bench-sleep", arm=ctx.arm)
        await asyncio.sleep(float(self.settings.get("sleep_s", 1.0)))
        ctx.transcript.emit("final", text="PASS")
        _end(started)
        return AgentOutput(final_answer="PASS", turns=Metric.measured(1, "bench-sleep"))
