"""The ``codex exec --json`` parser on recorded lines, and the agent's command line."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pairbench import SpecError
from pairbench.agents import AgentContext, InfraFailure, RunSignals, Transcript
from pairbench.agents.codex._agent import CodexAgent, mcp_overrides, toml_value
from pairbench.agents.codex._events import SOURCE, CodexEventParser
from pairbench.testing._fake_cli import RECORDED
from pairbench.testing.fake_codex import overrides

STEP = 0.05


def parse(name: str) -> tuple[CodexEventParser, list[dict[str, Any]]]:
    parser = CodexEventParser()
    lines = (RECORDED / name).read_text(encoding="utf-8").splitlines()
    events: list[dict[str, Any]] = []
    for i, line in enumerate(lines, start=1):
        events += [{"t": e.t, "kind": e.kind, **e.fields} for e in parser.feed(i * STEP, line)]
    events += [{"t": e.t, "kind": e.kind, **e.fields} for e in parser.finish(9.0)]
    return parser, events


def kinds(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def test_success_latency_from_item_start_to_completion_and_usage() -> None:
    parser, events = parse("codex_success.jsonl")
    (call,) = kinds(events, "tool_call")
    assert (call["server"], call["tool"], call["id"]) == ("tracker", "get_issue", "item_1")
    (result,) = kinds(events, "tool_result")
    assert result["is_error"] is False and result["client_ms"] == pytest.approx(50.0)
    assert "Document login redirect" in result["text"]
    s = parser.summary
    assert s.verdict().status == "ok"
    assert s.final_answer() == "Document login redirect in the importer (#625)"
    m = s.metrics()
    assert m["input_tokens"].value == 15276 and m["input_tokens"].source == SOURCE  # incl. cached
    assert m["output_tokens"].value == 41
    assert m["cost_usd"].provenance == "missing"
    (usage,) = kinds(events, "usage")
    assert usage["cached_input_tokens"] == 9984 and usage["provenance"] == "measured"


def test_the_recorded_approval_rejection_is_an_error_result() -> None:
    parser, events = parse("codex_reference.jsonl")
    (result,) = kinds(events, "tool_result")
    assert result["is_error"] is True and "requires approval" in result["text"]
    assert not kinds(events, "transport_failure")  # a policy rejection, not the wire
    assert parser.summary.usage["input_tokens"] == 15276


def test_reconnecting_is_kept_as_a_message_not_an_error() -> None:
    parser, events = parse("codex_reconnecting.jsonl")
    assert any(m["text"].startswith("Reconnecting...") for m in kinds(events, "message"))
    assert parser.summary.verdict().status == "ok"


def test_an_unavailable_server_is_a_transport_failure() -> None:
    _, events = parse("codex_server_unavailable.jsonl")
    (result,) = kinds(events, "tool_result")
    assert result["is_error"] is True
    (failure,) = kinds(events, "transport_failure")
    assert failure["server"] == "tracker" and failure["failure"] == "unavailable"


def _ctx(tmp_path: Path, signals: RunSignals, mcp: dict[str, Any] | None = None) -> AgentContext:
    return AgentContext(
        run_id="r",
        arm="a",
        task="t",
        trial=1,
        seed=1,
        model_seed=1,
        prompt="-what?",
        content={},
        env={"PATH": "/nonexistent"},
        workdir=tmp_path,
        transcript=Transcript(None),
        settings={},
        timeout_s=60,
        has_tools=mcp is not None,
        mcp_config=mcp,
        signals=signals,
    )


def test_turn_failed_with_401_is_infra_before_any_success_then_agent_error() -> None:
    parser, events = parse("codex_turn_failed.jsonl")
    verdict = parser.summary.verdict()
    assert verdict.status == "api_error" and verdict.auth
    assert kinds(events, "error")
    assert parser.summary.metrics()["input_tokens"].provenance == "missing"


def test_bad_settings_are_spec_errors_and_a_missing_executable_is_infra(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"agent\.settings\.model: is required"):
        CodexAgent({})
    with pytest.raises(SpecError, match="unknown setting 'temperature'"):
        CodexAgent({"model": "m", "temperature": 0})
    with pytest.raises(InfraFailure, match="not found on the arm's PATH"):
        asyncio.run(CodexAgent({"model": "m"}).run(_ctx(tmp_path, RunSignals())))


def test_mcp_servers_become_toml_overrides_codex_can_read(tmp_path: Path) -> None:
    mcp = {
        "mcpServers": {
            "tracker": {
                "type": "stdio",
                "command": "/py",
                "args": ["-m", "s"],
                "env": {"A": 'x"y'},
            },
            "web.site": {"type": "http", "url": "http://h/mcp", "headers": {"x-t": "a/1"}},
        }
    }
    ctx = _ctx(tmp_path, RunSignals(), mcp)
    argv = CodexAgent({"model": "m"}).argv("codex", ctx, ctx.prompt)
    assert argv[:2] == ["codex", "exec"] and argv[-2:] == ["--", "-what?"]
    for flag in ("--json", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config"):
        assert flag in argv
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    config = overrides(pairs)
    tracker = config["mcp_servers"]["tracker"]
    assert tracker == {
        "command": "/py",
        "args": ["-m", "s"],
        "env": {"A": 'x"y'},
        "default_tools_approval_mode": "approve",
        "required": True,
    }
    web = config["mcp_servers"]["web.site"]
    assert web["url"] == "http://h/mcp" and web["http_headers"] == {"x-t": "a/1"}
    assert web["default_tools_approval_mode"] == "approve"
    assert mcp_overrides(None) == []
    assert tomllib.loads(f"v = {toml_value({'a b': [1, True]})}")["v"] == {"a b": [1, True]}


def test_header_values_go_to_codexs_environment_never_its_command_line(tmp_path: Path) -> None:
    token = "Bearer tok-secret-5d2c9e81aa"
    mcp = {
        "mcpServers": {
            "api": {
                "type": "http",
                "url": "http://h/mcp",
                "headers": {"x-pairbench-trial": "a/t/0/1", "Authorization": token},
            }
        }
    }
    ctx = _ctx(tmp_path, RunSignals(), mcp)
    header_env: dict[str, str] = {}
    argv = CodexAgent({"model": "m"}).argv("codex", ctx, ctx.prompt, header_env)
    assert not any(token in a or "tok-secret" in a for a in argv)
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    api = overrides(pairs)["mcp_servers"]["api"]
    assert "http_headers" not in api
    names = api["env_http_headers"]
    assert {header_env[names[h]] for h in names} == {"a/t/0/1", token}
    assert header_env[names["Authorization"]] == token
