"""``tool_calling: constrained`` and explicit sampling: what each request sends, and how a
constrained reply becomes a tool call or an answer (the real server: tests/model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pairbench._errors import SpecError
from pairbench.agents._protocol import AgentContext, RunSignals
from pairbench.agents.openai import _constrained as constrained
from pairbench.agents.openai._agent import OpenAIAgent
from pairbench.agents.openai._wire import Reply
from pairbench.store._transcript import Transcript

FUNCTIONS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "tracker__get_issue",
            "description": "Get an issue.",
            "parameters": {
                "type": "object",
                "properties": {"number": {"type": "integer"}},
                "required": ["number"],
            },
        },
    }
]
BASE = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}


def _ctx(tmp_path: Path) -> AgentContext:
    return AgentContext(
        run_id="r", arm="a", task="t", trial=0, seed=1, model_seed=77, prompt="p", content={},
        env={}, workdir=tmp_path, transcript=Transcript(tmp_path / "t.jsonl"), settings={},
        timeout_s=60, has_tools=True, open_tools=None, signals=RunSignals(),
    )  # fmt: skip


def _kwargs(tmp_path: Path, **settings: Any) -> dict[str, Any]:
    agent = OpenAIAgent({**BASE, **settings})
    return agent.request_kwargs(_ctx(tmp_path), [{"role": "user", "content": "p"}], FUNCTIONS)


def test_constrained_sends_a_schema_of_each_tool_and_the_answer_and_no_tools(
    tmp_path: Path,
) -> None:
    kwargs = _kwargs(tmp_path, tool_calling="constrained")
    assert "tools" not in kwargs
    schema = kwargs["response_format"]["json_schema"]["schema"]
    call, answer = schema["anyOf"]
    assert call["properties"]["tool"] == {"type": "string", "enum": ["tracker__get_issue"]}
    assert call["properties"]["arguments"] == FUNCTIONS[0]["function"]["parameters"]
    assert answer["required"] == ["answer"]
    native = _kwargs(tmp_path)
    assert native["tools"] == FUNCTIONS and "response_format" not in native


def test_the_prompt_lists_each_tool_with_its_argument_schema() -> None:
    text = constrained.prompt_text(FUNCTIONS)
    assert "- tracker__get_issue: Get an issue. Arguments: " in text
    assert json.dumps(FUNCTIONS[0]["function"]["parameters"], sort_keys=True) in text
    assert '{"tool": "<tool name>", "arguments": {...}}' in text
    assert len(constrained.prompt_sha256()) == 64


@pytest.mark.parametrize(
    ("content", "calls", "answer", "unread"),
    [
        ('{"tool": "tracker__get_issue", "arguments": {"number": 7}}', 1, None, None),
        ('{"answer": "Fix the login bug"}', 0, "Fix the login bug", None),
        ('{"tool": "tracker__get_issue", "arguments": {"number": \n\t\t', 0, None, "not JSON"),
        ('{"other": 1}', 0, '{"other": 1}', "neither a tool call nor an answer"),
    ],
)
def test_a_constrained_reply_becomes_a_call_an_answer_or_stays_unread(
    content: str, calls: int, answer: str | None, unread: str | None
) -> None:
    reply, why = constrained.parse(Reply(content=content, finish_reason="length"), turn=2)
    assert len(reply.tool_calls) == calls
    if calls:
        assert reply.tool_calls[0] == {
            "id": "call_2", "name": "tracker__get_issue", "arguments": '{"number": 7}',
        }  # fmt: skip
        assert reply.content is None
    elif unread == "not JSON":
        assert reply.content == content  # kept as the answer, graded as it is
    else:
        assert reply.content == answer
    assert (why is None) == (unread is None) and (unread or "") in (why or "")


def test_sampling_is_sent_explicitly_and_an_omitted_temperature_is_server_default(
    tmp_path: Path,
) -> None:
    sent = _kwargs(tmp_path, temperature=1.0, top_p=0.9, cache_prompt=False)
    assert (sent["temperature"], sent["top_p"]) == (1.0, 0.9)
    assert sent["extra_body"] == {"cache_prompt": False} and sent["seed"] == 77
    omitted = _kwargs(tmp_path, temperature=None)
    assert "temperature" not in omitted and "top_p" not in omitted
    assert "extra_body" not in omitted
    agent = OpenAIAgent({**BASE, "temperature": None})
    assert agent.sampling() == {
        "temperature": "server_default", "top_p": "server_default",
        "cache_prompt": "server_default", "seed": "model_seed",
    }  # fmt: skip


def test_an_unknown_tool_calling_mode_is_a_clear_error() -> None:
    with pytest.raises(SpecError, match="tool_calling"):
        OpenAIAgent({**BASE, "tool_calling": "grammar"})


def test_run_json_records_the_mode_and_the_prompt_it_used() -> None:
    described = OpenAIAgent.describe({**BASE, "tool_calling": "constrained"}, {})
    assert described["tool_calling"] == "constrained"
    assert described["constrained_prompt_sha256"] == constrained.prompt_sha256()
    assert "constrained_prompt_sha256" not in OpenAIAgent.describe(BASE, {})
