"""The openai agent with the real model: constrained tool calls from Gemma 3 270M reach the
real fixture MCP server over stdio and streamable HTTP, every request seeded, usage and
llama.cpp timings measured, and the two transports' token counts equal pair by pair (the
mcp-transports study's H1, which a deterministic double cannot test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _helpers import edit_experiment, skip_outside_ci, study_copy, task_named
from pairbench import RunOutcome, start_run
from pairbench.model import LlamaServer
from pairbench.model._build import cached_build
from pairbench.model._weights import installed_model

pytestmark = pytest.mark.slow
TRANSPORTS = ("local-stdio", "remote-http")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunOutcome]:
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    root = tmp_path_factory.mktemp("real-agent")
    with LlamaServer.start() as server:
        exp = study_copy(root)
        settings = {
            "base_url": f"{server.url}/v1",
            "model": server.config.alias,
            "tool_calling": "constrained",
            "temperature": 1.0,
            "cache_prompt": False,
            "max_turns": 3,
            "max_output_tokens": 96,
        }
        arms = {name: arm for name, arm in _arms(exp).items() if name in TRANSPORTS}
        edit_experiment(
            exp,
            trials=2,
            tasks=[task_named(exp, "read-issue-title")],
            arms=arms,
            comparisons=[list(TRANSPORTS)],
            budget={"trial_timeout_s": 120, "concurrency": server.config.slots},
            agent={"adapter": "openai", "settings": settings},
        )
        # Run seed 3: on this build and model, trial 1 calls tools (trial 0 answers at once).
        yield start_run(exp, root / "runs", run_seed=3)


def _arms(exp: Path) -> dict[str, Any]:
    from ruamel.yaml import YAML

    data: dict[str, Any] = YAML(typ="safe").load(exp.read_text(encoding="utf-8"))
    arms: dict[str, Any] = data["arms"]
    return arms


def _events(run: RunOutcome, arm: str, trial: int) -> list[dict[str, Any]]:
    path = run.run_dir / "transcripts" / arm / "read-issue-title" / f"{trial}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_models_tool_calls_reach_the_fixture_over_both_transports(run: RunOutcome) -> None:
    assert run.status == "complete", run.status
    for arm in TRANSPORTS:
        audits = sorted((run.run_dir / "fixtures" / arm).rglob("audit.jsonl"))
        calls = [json.loads(x) for p in audits for x in p.read_text(encoding="utf-8").splitlines()]
        assert calls, f"{arm}: no tool call of the model reached the tracker"
        assert all(c["tool"] for c in calls)
        tool_calls = [e for t in (0, 1) for e in _events(run, arm, t) if e["kind"] == "tool_call"]
        assert len(tool_calls) == len(calls)


def test_every_request_is_seeded_and_measured_with_llama_cpp_timings(run: RunOutcome) -> None:
    for r in run.results:
        assert r.seeding is not None and r.seeding.status == "seeded", r.seeding
        assert r.metrics is not None and r.metrics.input_tokens.provenance == "measured"
        events = _events(run, r.arm, r.trial)
        start = next(e for e in events if e["kind"] == "agent_start")
        assert start["sampling"]["temperature"] == 1.0 and start["tool_calling"] == "constrained"
        assert start["sampling"]["cache_prompt"] is False
        requests = [e for e in events if e["kind"] == "model_request"]
        assert requests and all(q["seed_sent"] == r.model_seed for q in requests)
        for q in requests:
            assert q["timings"]["predicted_n"] == q["usage"]["completion_tokens"]
            assert q["timings"]["prompt_per_second"] > 0


def test_the_two_transports_use_the_same_tokens_pair_by_pair(run: RunOutcome) -> None:
    by_arm = {a: {r.trial: r for r in run.results if r.arm == a} for a in TRANSPORTS}
    for trial in (0, 1):
        a, b = (by_arm[arm][trial].metrics for arm in TRANSPORTS)
        assert a is not None and b is not None
        assert a.input_tokens.value == b.input_tokens.value, trial
        assert a.output_tokens.value == b.output_tokens.value, trial
    # The pairs differ from each other: the seed changes what the model does.
    first, second = (by_arm["local-stdio"][t].metrics for t in (0, 1))
    assert first is not None and second is not None
    assert first.input_tokens.value != second.input_tokens.value
