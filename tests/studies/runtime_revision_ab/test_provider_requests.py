"""The study's view of the recording proxy's exchanges: ``ProviderRequest`` and the canary
search, from ``ExchangeRecord``s (no server needed)."""

from __future__ import annotations

import json
from typing import Any

from pairbench.proxy import ExchangeRecord
from pairbench.studies.runtime_revision_ab._provider import (
    ProviderRequest,
    body_text,
    chat_completions,
)


def _record(n: int, method: str, path: str, **fields: Any) -> ExchangeRecord:
    return ExchangeRecord(n=n, method=method, path=path, request_sha256="ab" * 32,
                          sent_at="t", end_at="t", sent_ms=0.0, end_ms=0.0,
                          **fields)  # fmt: skip


def test_only_chat_completions_count_and_map_to_provider_requests() -> None:
    records = [
        _record(1, "GET", "/v1/models", status=200),
        _record(2, "POST", "/v1/chat/completions", status=200,
                request_json={"seed": 4, "temperature": 1, "max_tokens": 64, "messages": [
                    {"role": "tool", "tool_call_id": "c0", "content": "ok"}]},
                response_json={"choices": [{"message": {"content": None, "tool_calls": [
                    {"id": "c1", "function": {"name": "f", "arguments": "{}"}}]}}]},
                usage={"prompt_tokens": 10, "completion_tokens": 2},
                timings={"predicted_ms": 40.0}),
        _record(3, "POST", "/v1/chat/completions", request_json={"seed": "4"}),
    ]  # fmt: skip
    chats = chat_completions(records)
    assert [r.n for r in chats] == [2, 3]
    got = [ProviderRequest.from_record(r) for r in chats]
    messages = [{"role": "tool", "tool_call_id": "c0", "content": "ok"}]
    assert got[0] == ProviderRequest(
        sha256="ab" * 32, seed=4, temperature=1.0, status=200, prompt_tokens=10,
        completion_tokens=2, n=2, tool_calls=["c1"], tool_results=["c0"],
        prompt_chars=len(json.dumps(messages)), max_tokens=64, generation_ms=40.0,
        reply_chars=len(json.dumps([None, [{"id": "c1", "function": {"name": "f",
                                                                      "arguments": "{}"}}]])),
    )  # fmt: skip
    # no response at all (the endpoint unreachable): the 502 the client got
    assert (got[1].seed, got[1].temperature, got[1].status, got[1].prompt_tokens) == (
        None, None, 502, None)  # fmt: skip


def test_the_canary_is_found_in_json_and_text_bodies() -> None:
    as_json = _record(1, "POST", "/v1/chat/completions",
                      request_json={"messages": [{"content": "é CANARY-1"}]})  # fmt: skip
    as_text = _record(2, "POST", "/v1/chat/completions", request_text="not json CANARY-1")
    assert "é CANARY-1" in body_text(as_json)  # unescaped, as the runtime wrote it
    assert "CANARY-1" in body_text(as_text)
