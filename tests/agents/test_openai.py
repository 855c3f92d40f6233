"""The openai agent against the local Chat Completions double and a real stdio tracker server."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from pairbench._errors import SpecError
from pairbench._template import render
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure, RunSignals
from pairbench.agents.openai._agent import OpenAIAgent
from pairbench.fixtures._mcp import McpSurface
from pairbench.spec._models import McpServer
from pairbench.store._transcript import Transcript
from pairbench.studies.mcp_transports import STUDY
from pairbench.studies.mcp_transports._content import generate
from pairbench.studies.mcp_transports._double import NO_TRACKER
from pairbench.testing.chat_double import ChatDouble, start_chat_double

pytestmark = pytest.mark.whole_run

SEED = 20261129
MODEL_SEED = 123456789
STDIO = McpServer(
    transport="stdio", command=["python3", "-m", "pairbench.studies.mcp_transports.tracker_server"]
)
CONTENT = generate(SEED)
TARGET = CONTENT["target"]


def _prompt(name: str) -> str:
    text = (STUDY.root / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    return str(render(text, {"fixture": CONTENT, "seed": SEED}))


def _ctx(
    tmp_path: Path,
    server_env: dict[str, str],
    *,
    tools: bool = True,
    prompt: str = "read_issue_title",
    env: dict[str, str] | None = None,
    signals: RunSignals | None = None,
) -> AgentContext:
    transcript = Transcript(tmp_path / "transcript.jsonl")

    @asynccontextmanager
    async def open_tools() -> AsyncIterator[McpSurface]:
        surface = McpSurface(
            {"tracker": STDIO}, {}, SEED, tmp_path / "fixture", "t", server_env, transcript
        )
        async with surface as connected:
            yield connected

    return AgentContext(
        run_id="r",
        arm="local-stdio" if tools else "baseline",
        task=prompt,
        trial=0,
        seed=SEED,
        model_seed=MODEL_SEED,
        prompt=_prompt(prompt),
        content=CONTENT,
        env=env or {},
        workdir=tmp_path,
        transcript=transcript,
        settings={},
        timeout_s=60,
        has_tools=tools,
        open_tools=open_tools if tools else None,
        signals=signals or RunSignals(),
    )


def _run(agent: OpenAIAgent, ctx: AgentContext) -> AgentOutput:
    return asyncio.run(agent.run(ctx))


def _agent(double: ChatDouble, **settings: Any) -> OpenAIAgent:
    return OpenAIAgent({"base_url": f"{double.url}/v1", "model": "double", **settings})


def _audit(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "fixture" / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("stream", [False, True])
def test_the_tool_loop_reaches_the_server_and_answers_from_it(
    tmp_path: Path, server_env: dict[str, str], stream: bool
) -> None:
    ctx = _ctx(tmp_path, server_env)
    with start_chat_double({"timings": True}) as double:
        out = _run(_agent(double, stream=stream), ctx)
        usages = double.usages
        bodies = double.requests
        received = [e.body_sha256 for e in double.exchanges]
    assert out.error is None and out.final_answer == TARGET["issue_title"]
    assert [(e["tool"], e["arguments"]["number"]) for e in _audit(tmp_path)] == [
        ("get_issue", TARGET["issue_number"])
    ]
    calls = ctx.transcript.of_kind("tool_call")
    assert [(c["server"], c["tool"]) for c in calls] == [("tracker", "get_issue")]
    offered = {t["function"]["name"] for t in bodies[0]["tools"]}
    assert {"tracker__get_issue", "tracker__list_issues", "tracker__read_file"} <= offered
    assert bodies[1]["messages"][-1]["role"] == "tool"
    requests = ctx.transcript.of_kind("model_request")
    assert [r["finish_reason"] for r in requests] == ["tool_calls", "stop"]
    assert [r["usage"] for r in requests] == usages
    assert all(r["seed_sent"] == MODEL_SEED and r["retries"] == 0 for r in requests)
    # The digest of each body the agent sent is the digest of the bytes the server received.
    assert [r["body_sha256"] for r in requests] == received
    assert all(len(r["reply_sha256"]) == 64 for r in requests)
    assert requests[0]["reply_sha256"] != requests[1]["reply_sha256"]
    assert requests[0]["system_fingerprint"] == "fp_pairbench_double"
    assert requests[1]["usage"]["prompt_tokens_details"]["cached_tokens"] > 0
    assert (
        requests[1]["timings"]["cache_n"]
        == requests[1]["usage"]["prompt_tokens_details"]["cached_tokens"]
    )
    assert all(b.get("stream", False) is stream for b in bodies)
    if stream:
        assert all(b["stream_options"] == {"include_usage": True} for b in bodies)
    assert out.input_tokens.provenance == "measured"
    assert out.input_tokens.value == sum(u["prompt_tokens"] for u in usages)
    assert out.output_tokens.value == sum(u["completion_tokens"] for u in usages)
    assert out.input_tokens.source == "127.0.0.1 usage (chat.completions)"
    assert out.cost_usd.provenance == "missing" and "no price table" in (out.cost_usd.reason or "")
    assert out.turns.value == 2
    assert out.seeding is not None and out.seeding.status == "seeded"
    assert (out.seeding.requests, out.seeding.requests_with_seed) == (2, 2)
    assert ctx.signals.model_call_succeeded
    assert ctx.transcript.of_kind("final")[-1]["text"] == TARGET["issue_title"]


def test_an_arm_without_tools_gets_plain_completions(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    ctx = _ctx(tmp_path, server_env, tools=False)
    with start_chat_double() as double:
        out = _run(_agent(double), ctx)
        assert "tools" not in double.requests[0]
    assert out.final_answer == NO_TRACKER and out.error is None
    assert not ctx.transcript.of_kind("tool_call")


def test_tier_one_and_two_tasks_end_to_end_through_the_agent(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    with start_chat_double() as double:
        count = _run(_agent(double), _ctx(tmp_path / "a", server_env, prompt="count_open_label"))
        line = _run(_agent(double), _ctx(tmp_path / "b", server_env, prompt="read_file_line"))
        opened = _run(_agent(double), _ctx(tmp_path / "c", server_env, prompt="open_issue"))
    assert count.final_answer == str(TARGET["open_label_count"])
    assert line.final_answer == TARGET["line_text"]
    assert opened.final_answer and opened.final_answer.startswith("Opened issue #")
    store = json.loads((tmp_path / "c" / "fixture" / "store.json").read_text())
    titles = [i["title"] for i in store["repos"][TARGET["repo"]]["issues"]]
    assert TARGET["new_issue_title"] in titles


class DropSeedOnSecondRequest(OpenAIAgent):
    """Leaves the seed out of the 2nd request's kwargs."""

    calls = 0

    def request_kwargs(self, ctx: AgentContext, messages: Any, tools: Any) -> dict[str, Any]:
        kwargs = super().request_kwargs(ctx, messages, tools)
        self.calls += 1
        if self.calls == 2:
            kwargs.pop("seed")
        return kwargs


class SeedOverriddenOnTheWire(OpenAIAgent):
    """Means to send the seed (kwargs carry it) but the body sent carries another one."""

    def request_kwargs(self, ctx: AgentContext, messages: Any, tools: Any) -> dict[str, Any]:
        kwargs = super().request_kwargs(ctx, messages, tools)
        assert kwargs["seed"] == ctx.model_seed
        return {**kwargs, "extra_body": {"seed": ctx.model_seed + 1}}


def test_one_request_without_the_seed_makes_the_trial_unseeded(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    ctx = _ctx(tmp_path, server_env)
    with start_chat_double() as double:
        base = {"base_url": f"{double.url}/v1", "model": "double"}
        out = _run(DropSeedOnSecondRequest(base), ctx)
        assert [b.get("seed") for b in double.requests] == [MODEL_SEED, None]
    assert out.final_answer == TARGET["issue_title"]  # the trial itself worked
    assert out.seeding is not None and out.seeding.status == "unseeded"
    assert (out.seeding.requests, out.seeding.requests_with_seed) == (2, 1)
    assert "1 of 2 chat request bodies sent lacked seed" in out.seeding.reason
    assert [r["seed_sent"] for r in ctx.transcript.of_kind("model_request")] == [MODEL_SEED, None]


def test_seed_evidence_comes_from_the_body_sent_not_from_intent(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    with start_chat_double() as double:
        base = {"base_url": f"{double.url}/v1", "model": "double"}
        out = _run(SeedOverriddenOnTheWire(base), _ctx(tmp_path / "a", server_env))
        assert {b["seed"] for b in double.requests} == {MODEL_SEED + 1}
        off = _run(_agent(double, seed=False), _ctx(tmp_path / "b", server_env))
    assert out.seeding is not None and out.seeding.status == "unseeded"
    assert out.seeding.requests_with_seed == 0
    assert off.seeding is not None and off.seeding.status == "unseeded"
    assert "agent.settings.seed is false" in off.seeding.reason


def test_a_rate_limit_after_success_is_an_agent_error_with_the_reason(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    ctx = _ctx(tmp_path, server_env)
    with start_chat_double({"rate_limit_on": [2]}) as double:
        out = _run(_agent(double), ctx)
        first = double.usages[0]
    assert out.final_answer is None
    assert out.error is not None and out.error.startswith("rate limited (429): Rate limit reached")
    assert out.input_tokens.value == first["prompt_tokens"]  # the one completed response
    failed = ctx.transcript.of_kind("model_request")[-1]
    assert failed["ok"] is False and failed["error"] == out.error
    assert ctx.transcript.of_kind("error")[-1]["message"] == out.error


def test_server_errors_and_max_turns_are_agent_errors(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    with start_chat_double({"server_error_on": [1]}) as double:
        out = _run(_agent(double), _ctx(tmp_path / "a", server_env, tools=False))
        assert out.error and out.error.startswith("provider error (500)")
        assert out.input_tokens.reason == "no model response completed"
        capped = _run(_agent(double, max_turns=1), _ctx(tmp_path / "b", server_env))
    assert capped.error and capped.error.startswith("max turns reached")
    assert not (tmp_path / "b" / "fixture" / "audit.jsonl").exists()  # last calls not run


def test_authentication_before_any_success_is_infra_and_after_is_agent_error(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    with start_chat_double({"api_key": "sk-test"}) as double:
        with pytest.raises(InfraFailure, match="the model provider rejected authentication"):
            _run(_agent(double), _ctx(tmp_path / "a", server_env, tools=False))
        keyed = _ctx(tmp_path / "b", server_env, tools=False, env={"MY_KEY": "sk-test"})
        ok = _run(_agent(double, api_key_env="MY_KEY"), keyed)
        assert ok.final_answer == NO_TRACKER and ok.error is None
        late = _run(
            _agent(double), _ctx(tmp_path / "c", server_env, tools=False, signals=keyed.signals)
        )
    assert late.error and late.error.startswith("the model provider rejected authentication (401)")


def test_quota_and_unreachable_before_any_success_are_infra(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    with (
        start_chat_double({"quota_on": [1]}) as double,
        pytest.raises(InfraFailure, match="quota"),
    ):
        _run(_agent(double), _ctx(tmp_path / "a", server_env, tools=False))
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agent = OpenAIAgent({"base_url": f"http://127.0.0.1:{port}/v1", "model": "m"})
    ctx = _ctx(tmp_path / "b", server_env, tools=False)
    with pytest.raises(InfraFailure, match="the model provider is unreachable"):
        _run(agent, ctx)
    assert ctx.transcript.of_kind("model_request")[0]["ok"] is False


def test_missing_usage_is_missing_and_prices_give_an_estimate(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    with start_chat_double({"omit_usage_on": [2]}) as double:
        out = _run(_agent(double), _ctx(tmp_path / "a", server_env))
        price = {"input": 0.5, "output": 2.0}
        priced = _run(_agent(double, price_per_1k=price), _ctx(tmp_path / "b", server_env))
        usages = double.usages[1:]
    assert out.final_answer == TARGET["issue_title"]
    assert out.input_tokens.provenance == "missing" and out.input_tokens.value is None
    assert "1 of 2 model responses carried no usage" in (out.input_tokens.reason or "")
    assert out.cost_usd.provenance == "missing"
    n_in = sum(u["prompt_tokens"] for u in usages)
    n_out = sum(u["completion_tokens"] for u in usages)
    assert priced.input_tokens.value == n_in
    assert priced.cost_usd.provenance == "estimated"
    assert priced.cost_usd.estimator == "price_per_1k setting"
    assert priced.cost_usd.value == pytest.approx((n_in * 0.5 + n_out * 2.0) / 1000)


def test_settings_are_validated() -> None:
    with pytest.raises(SpecError, match=r"agent\.settings\.model"):
        OpenAIAgent({"base_url": "http://127.0.0.1:1/v1"})
    with pytest.raises(SpecError, match=r"agent\.settings\.tempreature"):
        OpenAIAgent({"base_url": "http://x/v1", "model": "m", "tempreature": 0})
