"""Inspect AI tasks for the pairbench benchmark (run in bench/.venv-inspect only).

    inspect eval bench/inspect_bench/bench_tasks.py@noop  -T n=1000 --model mockllm/model
    inspect eval bench/inspect_bench/bench_tasks.py@sleep -T n=1000 -T sleep_s=1 \
        --model mockllm/model

``noop``  n samples; the solver calls ``generate()`` on Inspect's mock model once and the
          ``includes()`` scorer grades the answer: Inspect's own cost per sample.
``sleep`` the same, after ``await asyncio.sleep(sleep_s)`` (a simulated 1 s model latency).

Offline token counting (the documented patch): Inspect's mock model fills in token usage
by calling ``ModelAPI.count_text_tokens``, which runs ``tiktoken.get_encoding("o200k_base")``
and so downloads the o200k_base tokenizer file on first use. There is no network here, so
this module replaces ``MockLLM.count_text_tokens`` with an offline estimate (characters / 4,
plus the same 10% buffer Inspect adds). It is a class attribute set when Inspect imports this
task file, before any sample runs; nothing in the installed package is edited. The estimate
costs less CPU than tiktoken would, so it can only flatter Inspect's per-sample CPU.

When ``PAIRBENCH_BENCH_STAMPS`` names a file, the first sample's start is written to it at
once and ``{"first_start", "last_end", "n"}`` at exit (the same protocol as the pairbench
bench agents in ``bench/plugin``).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import time
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model._providers.mockllm import MockLLM
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, Solver, TaskState, solver


async def _offline_count_text_tokens(self: Any, text: str) -> int:
    return max(1, int(len(text) / 4 * 1.1))


MockLLM.count_text_tokens = _offline_count_text_tokens  # type: ignore[method-assign]

_STAMPS = os.environ.get("PAIRBENCH_BENCH_STAMPS")
_state: dict[str, Any] = {"first_start": None, "last_end": None, "n": 0}


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


@solver
def _bench_solver(sleep_s: float = 0.0) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if _STAMPS and _state["first_start"] is None:
            _state["first_start"] = time.time()
            _state["first_start_peak_rss_mb"] = _peak_rss_mb()
            _write()
        if sleep_s:
            await asyncio.sleep(sleep_s)
        state = await generate(state)
        if _STAMPS:
            _state["last_end"] = time.time()
            _state["n"] += 1
        return state

    return solve


def _dataset(n: int) -> list[Sample]:
    target = MockLLM.default_output
    return [Sample(id=i + 1, input="Say PASS.", target=target) for i in range(int(n))]


@task
def noop(n: int = 1) -> Task:
    return Task(dataset=_dataset(n), solver=_bench_solver(), scorer=includes())


@task
def sleep(n: int = 1000, sleep_s: float = 1.0) -> Task:
    return Task(dataset=_dataset(n), solver=_bench_solver(float(sleep_s)), scorer=includes())
