"""The openai agent with the real model: constrained tool calls from Gemma 3 270M reach the
real fixture MCP server over stdio and streamable HTTP, every request seeded, usage and
llama.cpp timings measured, and the two transports' token counts equal pair by pair (the
mcp-transports study's H1, which a deterministic double cannot test)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from helpers.common import cli, edit_experiment, skip_outside_ci, study_copy, task_named
from pairbench.agents._protocol import AgentContext, InfraFailure, RunSignals
from pairbench.agents.openai._agent import OpenAIAgent
from pairbench.fixtures._mcp import McpSurface
from pairbench.fixtures._serve_port import free_port
from pairbench.model import LlamaServer, ServeConfig
from pairbench.model._build import cached_build
from pairbench.model._weights import installed_model
from pairbench.spec._models import McpServer
from pairbench.store._load_run import LoadedRun, load_run
from pairbench.store._transcript import Transcript

pytestmark = pytest.mark.model

TRANSPORTS = ("local-stdio", "remote-http")
TRACKER = "pairbench.studies.mcp_transports.tracker_server"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> LoadedRun:
    """``pairbench run --model-server local`` as a user runs it: the CLI starts the server
    at the experiment's base_url, records its identity and stops it."""
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    root = tmp_path_factory.mktemp("real-agent")
    exp = study_copy(root)
    settings = {
        "base_url": f"http://127.0.0.1:{free_port()}/v1",
        "model": ServeConfig().alias,
        "tool_calling": "constrained",
        "temperature": 1.0,
        "cache_prompt": False,
        "stream": True,  # the time to first token is then measured
        "max_turns": 2,
        "max_output_tokens": 96,
    }
    arms = {name: arm for name, arm in _arms(exp).items() if name in TRANSPORTS}
    edit_experiment(
        exp,
        trials=2,
        tasks=[task_named(exp, "read-issue-title")],
        arms=arms,
        comparisons=[list(TRANSPORTS)],
        budget={"trial_timeout_s": 120, "concurrency": 4},
        agent={"adapter": "openai", "settings": settings},
    )
    # Run seed 3: on this build and model, trial 1 calls tools (trial 0 answers at once).
    done = cli("run", str(exp), "--model-server", "local", "--run-seed", "3", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "concurrency 1)" in done.stderr  # capped at the server's one slot
    (run_dir,) = (root / "runs").glob("mcp-transports-*")
    return load_run(run_dir)


def _arms(exp: Path) -> dict[str, Any]:
    from ruamel.yaml import YAML

    data: dict[str, Any] = YAML(typ="safe").load(exp.read_text(encoding="utf-8"))
    arms: dict[str, Any] = data["arms"]
    return arms


def _events(run: LoadedRun, arm: str, trial: int) -> list[dict[str, Any]]:
    path = run.run_dir.path / "transcripts" / arm / "read-issue-title" / f"{trial}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_models_tool_calls_reach_the_fixture_over_both_transports(run: LoadedRun) -> None:
    for arm in TRANSPORTS:
        audits = sorted((run.run_dir.path / "fixtures" / arm).rglob("audit.jsonl"))
        calls = [json.loads(x) for p in audits for x in p.read_text(encoding="utf-8").splitlines()]
        assert calls, f"{arm}: no tool call of the model reached the tracker"
        assert all(c["tool"] for c in calls)
        tool_calls = [e for t in (0, 1) for e in _events(run, arm, t) if e["kind"] == "tool_call"]
        assert len(tool_calls) == len(calls)


def test_every_request_is_seeded_and_measured_with_llama_cpp_timings(run: LoadedRun) -> None:
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


def test_the_two_transports_use_the_same_tokens_pair_by_pair(run: LoadedRun) -> None:
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


def test_h1s_exact_check_finds_identical_requests_and_replies_pair_by_pair(
    run: LoadedRun,
) -> None:
    """With the same seed on one slot, the two transports sent byte-identical request bodies
    (so the tool results were identical) and got identical replies: H1's per-pair check holds
    on every pair, from the digests the agent recorded, and the report says so."""
    summary = json.loads((run.run_dir.path / "summary.json").read_text(encoding="utf-8"))
    (h1,) = [h for h in summary["hypotheses"] if h["id"] == "h1-tokens"]
    inv = h1["invariance"]
    assert (inv["pairs"], inv["checked"], inv["identical"]) == (2, 2, 2), inv
    assert inv["holds"] is True and inv["divergences"] == []
    md = (run.run_dir.path / "report.md").read_text(encoding="utf-8")
    assert "2 of 2 checked pairs sent identical request bodies" in md
    assert "invariance holds" in md
    # Per request: the server's tokens and llama.cpp speeds, in their own section.
    by_arm = {a["arm"]: a for a in summary["model_requests"]}
    for arm in TRANSPORTS:
        made = sum(len(r.metrics.model_requests) for r in run.results if r.arm == arm and r.metrics)
        assert by_arm[arm]["requests"] == made > 0
        assert by_arm[arm]["generation_per_second"]["median"] > 0
        assert by_arm[arm]["prompt_tokens"]["n"] == made
        # Streamed: every completed request has its time to first token, within its latency.
        assert by_arm[arm]["first_token_ms"]["n"] == made - by_arm[arm]["failed"]
        assert 0 < by_arm[arm]["first_token_ms"]["median"] <= by_arm[arm]["latency_ms"]["median"]
    assert "## Model requests" in md


def test_run_json_and_the_report_name_the_model_and_the_build(run: LoadedRun) -> None:
    served = run.info.model_server
    assert served is not None
    assert served["model"]["sha256"] == installed_model().sha256  # type: ignore[union-attr]
    assert served["llama_cpp"]["binary_sha256"] == cached_build().binary_sha256  # type: ignore[union-attr]
    assert served["props"]["total_slots"] == 1 and served["serve"]["cache_prompt"] is False
    md = (run.run_dir.path / "report.md").read_text(encoding="utf-8")
    assert f"GGUF sha256 {served['model']['sha256']}" in md
    assert "(build_info b0-unknown)" in md


def test_the_server_killed_mid_trial_is_infra_not_an_agent_failure(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    """After a model call succeeded, the server dies (killed while the agent runs its tool
    call); the next request finds nobody listening: ``InfraFailure``, never a score."""
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    server = LlamaServer.start()
    stdio = McpServer(transport="stdio", command=[sys.executable, "-m", TRACKER])
    transcript = Transcript(tmp_path / "transcript.jsonl")

    @asynccontextmanager
    async def open_tools() -> AsyncIterator[McpSurface]:
        surface = McpSurface(
            {"tracker": stdio}, {}, 7, tmp_path / "fx", "t", server_env, transcript
        )
        async with surface as connected:
            real_call = connected.call

            async def call_then_kill(*args: Any, **kwargs: Any) -> Any:
                server.stop()  # SIGTERM, then SIGKILL: the model goes away mid-trial
                return await real_call(*args, **kwargs)

            connected.call = call_then_kill  # type: ignore[method-assign]
            yield connected

    ctx = AgentContext(
        run_id="r", arm="local-stdio", task="t", trial=1, seed=7, model_seed=1828859057,
        prompt="What is the title of issue 3 in repository acme/app?", content={},
        env={}, workdir=tmp_path, transcript=transcript, settings={}, timeout_s=300,
        has_tools=True, open_tools=open_tools, signals=RunSignals(),
    )  # fmt: skip
    agent = OpenAIAgent(
        {
            "base_url": f"{server.url}/v1",
            "model": server.config.alias,
            "tool_calling": "constrained",
            "temperature": 1.0,
            "cache_prompt": False,
            "max_turns": 3,
            "max_output_tokens": 64,
        }
    )
    agent_only_calls(agent)
    try:
        with pytest.raises(InfraFailure, match="the model provider is unreachable"):
            asyncio.run(agent.run(ctx))
    finally:
        server.stop()
    assert ctx.signals.model_call_succeeded  # it did succeed once, before the kill
    requests = transcript.of_kind("model_request")
    assert [q["ok"] for q in requests] == [True, False]


def agent_only_calls(agent: OpenAIAgent) -> None:
    """Constrain the reply to a tool call (no answer branch), so the first turn calls."""
    original = agent.request_kwargs

    def kwargs(ctx: AgentContext, messages: Any, tools: Any) -> dict[str, Any]:
        sent = original(ctx, messages, tools)
        schema = sent["response_format"]["json_schema"]["schema"]
        schema["anyOf"] = [b for b in schema["anyOf"] if "tool" in b["properties"]]
        return sent

    agent.request_kwargs = kwargs  # type: ignore[method-assign]
