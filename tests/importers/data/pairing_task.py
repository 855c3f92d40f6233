# mypy: ignore-errors
# (run by Inspect's own venv, bench/.venv-inspect; inspect_ai is not installed in the suite's)
"""An Inspect AI task for pairbench's importer tests (run by make_inspect_logs.sh).

20 samples; Inspect's ``mockllm`` model answers every prompt with the same default text, and
the ``includes()`` scorer marks a sample correct when its target is in the answer. Variant
``b`` appends the target to the answer of every third sample (so the arms differ on a known
set of pairs) and raises on sample 20 (an error: an infrastructure outcome, not a failure).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model._providers.mockllm import MockLLM
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, Solver, TaskState, solver


async def _offline_count_text_tokens(self: Any, text: str) -> int:
    # mockllm counts tokens with tiktoken, which downloads its encoding; there is no network
    # here (the same patch as bench/inspect_bench/bench_tasks.py).
    return max(1, int(len(text) / 4 * 1.1))


MockLLM.count_text_tokens = _offline_count_text_tokens  # type: ignore[method-assign]


@solver
def answer(variant: str) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await generate(state)
        number = int(str(state.sample_id))
        if variant == "b" and number == 20:
            raise RuntimeError("tool sandbox went away")
        if variant == "b" and number % 3 == 0:
            state.output.completion += " " + state.target.text
        return state

    return solve


@task
def pairing(variant: str = "a", n: int = 20) -> Task:
    samples = [
        Sample(
            id=i,
            input=f"Question {i}: say something.",
            target="Default" if i % 2 == 0 else f"needle-{i}",
            metadata={"topic": f"t{i % 4}"},
        )
        for i in range(1, n + 1)
    ]
    return Task(dataset=samples, solver=answer(variant), scorer=includes(), version="1.0")
