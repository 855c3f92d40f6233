"""The stream-json parser on recorded lines, one test per awkward case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pairbench.agents import AgentContext, InfraFailure, RunSignals, Transcript
from pairbench.agents._cli import CliRun
from pairbench.agents.claude_code._agent import ClaudeCodeAgent
from pairbench.agents.claude_code._stream import COST_ESTIMATOR, SOURCE, ClaudeStreamParser
from pairbench.grading._validity import classify_validity
from pairbench.spec._models import Arm
from pairbench.testing._fake_cli import RECORDED

TRACKER_ARM = Arm.model_validate(
    {"tools": {"mcp": {"tracker": {"transport": "stdio", "command": ["python3", "-m", "x"]}}}}
)
STEP = 0.1  # seconds between the stamped arrivals of recorded lines

EXITED_1 = CliRun(1, [], None)
URL = "http://127.0.0.1:9/"


def parse(
    name: str, *, tool_search: bool = False
) -> tuple[ClaudeStreamParser, list[dict[str, Any]]]:
    """Feed ``recorded/<name>`` line by line, each stamped STEP after the last."""
    parser = ClaudeStreamParser({"tracker": "stdio"}, tool_search=tool_search, started_t=0.0)
    lines = (RECORDED / name).read_text(encoding="utf-8").splitlines()
    events: list[dict[str, Any]] = []
    for i, line in enumerate(lines, start=1):
        events += [{"t": e.t, "kind": e.kind, **e.fields} for e in parser.feed(i * STEP, line)]
    end = (len(lines) + 1) * STEP
    events += [{"t": e.t, "kind": e.kind, **e.fields} for e in parser.finish(end)]
    return parser, events


def kinds(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def ctx(tmp_path: Path, signals: RunSignals | None = None) -> AgentContext:
    return AgentContext(
        run_id="r",
        arm="local-stdio",
        task="t",
        trial=1,
        seed=1,
        model_seed=1,
        prompt="p",
        content={},
        env={},
        workdir=tmp_path,
        transcript=Transcript(None),
        settings={},
        timeout_s=60,
        has_tools=True,
        signals=signals or RunSignals(),
    )


def test_success_pairs_calls_results_and_reads_totals_from_result() -> None:
    parser, events = parse("claude_success.jsonl")
    (connect,) = kinds(events, "mcp_connect")
    assert connect["ok"] and connect["transport"] == "stdio" and "get_issue" in connect["tools"]
    assert connect["ms"] == pytest.approx(100.0)  # spawn (t=0) to init's arrival
    (call,) = kinds(events, "tool_call")
    assert (call["server"], call["tool"]) == ("tracker", "get_issue")
    assert call["arguments"] == {"repo": "jolly-willow", "number": 7}
    (result,) = kinds(events, "tool_result")
    assert result["id"] == call["id"] and result["is_error"] is False
    assert result["client_ms"] == pytest.approx(100.0)  # arrival difference, tool_use -> result
    assert "Document login redirect" in result["text"]
    summary = parser.summary
    assert summary.verdict().status == "ok"
    assert summary.final_answer() == "Document login redirect in the importer (#625)"
    m = summary.metrics()
    assert m["input_tokens"].value == 3 + 9199 + 0 + 5 + 212 + 9199  # input + cache traffic
    assert m["input_tokens"].source == SOURCE and m["input_tokens"].provenance == "measured"
    assert m["output_tokens"].value == 48 + 17
    assert m["cost_usd"].provenance == "estimated" and m["cost_usd"].estimator == COST_ESTIMATOR
    assert m["agent_ms"].value == 2480 and m["agent_ms"].provenance == "measured"
    assert m["turns"].value == 2
    assert classify_validity(TRACKER_ARM, events).valid


def test_duplicate_usage_under_one_message_id_is_not_double_counted() -> None:
    parser, events = parse("claude_duplicate_usage.jsonl")
    summary = parser.summary
    lines = (RECORDED / "claude_duplicate_usage.jsonl").read_text().splitlines()
    naive = sum(
        json.loads(x)["message"]["usage"]["output_tokens"]
        for x in lines
        if json.loads(x)["type"] == "assistant"
    )
    result_usage = summary.result["usage"] if summary.result else {}
    assert summary.model_turns == 2
    dedup = sum(u["output_tokens"] for u in summary.usage_by_message.values())
    assert dedup == result_usage["output_tokens"] == 65 < naive
    # The last occurrence wins: the partial first block (output_tokens 1) is replaced.
    assert summary.usage_by_message["msg_02A"]["output_tokens"] == 48
    (usage, cost) = kinds(events, "usage")
    assert usage["output_tokens"] == 65 and usage["provenance"] == "measured"
    assert sum(p["output_tokens"] for p in usage["per_message"]) == 65
    assert cost["provenance"] == "estimated" and "input_tokens" not in cost
    assert summary.metrics()["output_tokens"].value == 65


def test_events_after_result_are_read_to_eof() -> None:
    parser, events = parse("claude_events_after_result.jsonl")
    assert parser.summary.after_result == 2
    (stream,) = kinds(events, "agent_stream")
    assert stream["events_after_result"] == 2
    assert stream["ignored"] == {"prompt_suggestion": 1, "rate_limit_event": 1}
    assert parser.summary.verdict().status == "ok"


def test_a_failed_server_in_init_is_a_transport_failure() -> None:
    _, events = parse("claude_failed_server.jsonl")
    (connect,) = kinds(events, "mcp_connect")
    assert connect["ok"] is False and connect["status"] == "failed" and connect["tools"] == []
    (failure,) = kinds(events, "transport_failure")
    assert failure["server"] == "tracker" and failure["failure"] == "connect"


def test_tool_search_is_on_surface_and_counted_as_a_turn_when_enabled() -> None:
    parser, events = parse("claude_tool_search.jsonl", tool_search=True)
    (search,) = kinds(events, "tool_search")
    assert search["query"] == "select:mcp__tracker__get_issue"
    (found,) = kinds(events, "tool_search_result")
    assert found["selected"] == ["mcp__tracker__get_issue"]
    assert found["client_ms"] == pytest.approx(100.0)
    assert [c["tool"] for c in kinds(events, "tool_call")] == ["get_issue"]
    assert classify_validity(TRACKER_ARM, events).valid
    assert parser.summary.metrics()["turns"].value == 3  # the ToolSearch turn included
    assert parser.summary.tool_searches == 1


def test_tool_search_pinned_off_yet_used_is_off_surface() -> None:
    _, events = parse("claude_tool_search.jsonl", tool_search=False)
    assert kinds(events, "warning")
    validity = classify_validity(TRACKER_ARM, events)
    assert not validity.valid and validity.off_surface == ["ToolSearch"]


def test_max_turns_is_an_agent_error(tmp_path: Path) -> None:
    parser, _ = parse("claude_max_turns.jsonl")
    assert parser.summary.verdict().status == "max_turns"
    out = ClaudeCodeAgent({"model": "sonnet", "max_turns": 1}).output(
        ctx(tmp_path), parser, EXITED_1, URL
    )
    assert out.error is not None and out.error.startswith("max turns")


def test_auth_failure_is_infra_when_nothing_in_the_run_succeeded(tmp_path: Path) -> None:
    parser, events = parse("claude_auth_failure.jsonl")
    result = parser.summary.result or {}
    assert result["subtype"] == "success" and result["is_error"] is True  # never trust subtype
    verdict = parser.summary.verdict()
    assert verdict.status == "api_error" and verdict.auth
    assert kinds(events, "error")[0]["api_error"] == "authentication_failed"
    agent = ClaudeCodeAgent({"model": "sonnet"})
    with pytest.raises(
        InfraFailure, match=r"the model endpoint http://127\.0\.0\.1:9/ rejected authentication"
    ):
        agent.output(ctx(tmp_path), parser, EXITED_1, URL)
    signals = RunSignals()
    signals.model_call_succeeded = True  # an earlier attempt of the run reached the model
    out = agent.output(ctx(tmp_path, signals), parser, EXITED_1, URL)
    assert out.error is not None and "authentication_failed" in out.error


def test_an_api_error_after_a_model_turn_is_an_agent_error(tmp_path: Path) -> None:
    parser, _ = parse("claude_api_error_mid_run.jsonl")
    signals = RunSignals()
    out = ClaudeCodeAgent({"model": "sonnet"}).output(ctx(tmp_path, signals), parser, EXITED_1, URL)
    assert signals.model_call_succeeded is True
    assert out.error is not None and "rate_limit" in out.error


def test_builtins_are_tools_without_server_and_dropped_connections_are_failures() -> None:
    _, events = parse("claude_builtin_and_dropped.jsonl")
    calls = kinds(events, "tool_call")
    assert [(c["server"], c["tool"]) for c in calls] == [(None, "Bash"), ("tracker", "get_issue")]
    results = kinds(events, "tool_result")
    assert [r["is_error"] for r in results] == [True, True]
    (failure,) = kinds(events, "transport_failure")
    assert failure["failure"] == "tool_call" and "Connection closed" in failure["detail"]
    assert classify_validity(TRACKER_ARM, events).off_surface == ["Bash"]


def test_reference_captures_parse_forward_compatibly() -> None:
    parser = ClaudeStreamParser({}, tool_search=True)
    lines = (RECORDED / "claude_reference.jsonl").read_text().splitlines()
    events = [e for i, line in enumerate(lines) for e in parser.feed(float(i), line)]
    events += parser.feed(9.0, "not json at all")
    events += parser.feed(9.1, json.dumps({"type": "brand_new_event", "x": 1}))
    by_kind = {e.kind for e in events}
    assert {"agent_init", "mcp_connect", "tool_call", "tool_result", "error", "stdout"} <= by_kind
    call = next(e for e in events if e.kind == "tool_call")
    assert (call.fields["server"], call.fields["tool"]) == ("bancada", "verify")
    assert parser.summary.ignored["brand_new_event"] == 1
    assert parser.summary.verdict().status == "api_error"
