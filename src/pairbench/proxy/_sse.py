"""Reading a recorded response: a Chat Completions stream aggregated, usage and identity
fields picked out of whichever shape the body has."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from pairbench.proxy._records import StreamSummary, ToolCall


class ResponseFields(NamedTuple):
    """What the record keeps from a response body, whatever its shape."""

    response_json: Any
    response_text: str | None
    stream: StreamSummary | None
    usage: dict[str, Any] | None
    timings: dict[str, Any] | None
    system_fingerprint: str | None
    model: str | None


def aggregate_stream(raw: bytes) -> tuple[StreamSummary, list[dict[str, Any]]]:
    """A Server-Sent Events body joined into one summary, and its parsed chunks.

    >>> body = b'data: {"choices":[{"delta":{"content":"Hi"}}]}\\n\\ndata: [DONE]\\n\\n'
    >>> aggregate_stream(body)[0].content
    'Hi'
    """
    chunks: list[dict[str, Any]] = []
    done, unparsed = False, 0
    for event in raw.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(
            line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")
        )
        if not data:
            continue
        if data.strip() == "[DONE]":
            done = True
            continue
        try:
            parsed = json.loads(data)
        except ValueError:
            unparsed += 1
            continue
        if isinstance(parsed, dict):
            chunks.append(parsed)
        else:
            unparsed += 1
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    final: dict[str, Any] | None = None
    for chunk in chunks:
        if chunk.get("usage") or chunk.get("timings"):
            final = chunk
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or {}
            content.append(str(delta.get("content") or ""))
            reasoning.append(str(delta.get("reasoning_content") or ""))
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    int(tc.get("index", 0)), {"id": None, "name": "", "args": ""}
                )
                fn = tc.get("function") or {}
                slot["id"] = tc.get("id") or slot["id"]
                slot["name"] += fn.get("name") or ""
                slot["args"] += fn.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    summary = StreamSummary(
        chunks=len(chunks),
        content="".join(content) or None,
        reasoning_content="".join(reasoning) or None,
        tool_calls=[
            ToolCall(index=i, id=c["id"], name=c["name"], arguments=c["args"])
            for i, c in sorted(calls.items())
        ],
        finish_reason=finish,
        final_chunk=final,
        done=done,
        unparsed=unparsed,
    )
    return summary, chunks


def _last(chunks: list[dict[str, Any]], key: str) -> Any:
    return next((c[key] for c in reversed(chunks) if c.get(key) is not None), None)


def response_fields(raw: bytes, content_type: str) -> ResponseFields:
    """Split a response body into the record's fields (JSON, text or stream)."""
    if "text/event-stream" in content_type.lower():
        summary, chunks = aggregate_stream(raw)
        usage, timings = _last(chunks, "usage"), _last(chunks, "timings")
        fingerprint, model = _last(chunks, "system_fingerprint"), _last(chunks, "model")
        return ResponseFields(None, None, summary, _dict(usage), _dict(timings),
                              _str(fingerprint), _str(model))  # fmt: skip
    if not raw:
        return ResponseFields(None, None, None, None, None, None, None)
    try:
        data = json.loads(raw)
    except ValueError:
        return ResponseFields(None, raw.decode("utf-8", errors="replace"), None,
                              None, None, None, None)  # fmt: skip
    head: Mapping[str, Any] = data if isinstance(data, dict) else {}
    return ResponseFields(
        data,
        None,
        None,
        _dict(head.get("usage")),
        _dict(head.get("timings")),
        _str(head.get("system_fingerprint")),
        _str(head.get("model")),
    )


def error_message(data: Any, text: str | None, status: int) -> str:
    """A refused request's reason: the upstream's ``error.message`` when it sent one."""
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return f"upstream answered {status}: {err['message']}"
    if isinstance(err, str):
        return f"upstream answered {status}: {err}"
    return f"upstream answered {status}" + (f": {text[:200]}" if text else "")


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
