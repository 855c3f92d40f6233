"""The provider requests of a run, read from the recording proxy's exchanges: the
independent count (the runtime's own events may be missing or wrong).

The forwarding is ``pairbench.proxy.RecordingProxy``'s; this module only maps its records.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field

from pairbench._model import Frozen
from pairbench.proxy import ExchangeRecord


class ProviderRequest(Frozen):
    """One chat completion that went through the proxy."""

    sha256: str
    """Of the request body as sent."""
    seed: int | None
    """The ``seed`` the body carried (None: not sent)."""
    temperature: float | None
    """The ``temperature`` the body carried (None: not sent)."""
    status: int
    """The endpoint's HTTP status (502: the endpoint could not be reached)."""
    prompt_tokens: int | None
    """``usage.prompt_tokens`` of the response (None: not reported)."""
    completion_tokens: int | None
    """``usage.completion_tokens`` of the response (None: not reported)."""
    n: int = 0
    """The proxy's exchange number (its arrival order)."""
    tool_calls: list[str] = Field(default_factory=list)
    """Ids of the tool calls the response proposed (independent of the runtime's events)."""
    tool_results: list[str] = Field(default_factory=list)
    """``tool_call_id`` of every tool result the request carried back to the model."""
    prompt_chars: int = 0
    """Characters of the request's messages as JSON: the prepared-input estimate's base."""
    max_tokens: int | None = None
    """The output reservation the request asked for (None: not sent)."""
    sent_ms: float = 0.0
    """When the proxy received it (its monotonic clock, ms)."""
    first_byte_ms: float | None = None
    end_ms: float = 0.0
    streamed: bool = False
    generation_ms: float | None = None
    """llama.cpp's ``timings.predicted_ms`` (None: not reported)."""
    reply_chars: int | None = None
    """Characters of the reply's text and tool calls as JSON (None: no reply)."""

    @classmethod
    def from_record(cls, record: ExchangeRecord) -> ProviderRequest:
        """The request an exchange record shows (its status 502 when none came back)."""
        sent = record.body or {}
        usage = record.usage or {}
        seed, temperature = sent.get("seed"), sent.get("temperature")
        listed = sent.get("messages")
        messages: list[Any] = listed if isinstance(listed, list) else []
        limit = sent.get("max_tokens", sent.get("max_completion_tokens"))
        predicted = (record.timings or {}).get("predicted_ms")
        return cls(
            sha256=record.request_sha256,
            seed=seed if isinstance(seed, int) else None,
            temperature=float(temperature) if isinstance(temperature, int | float) else None,
            status=record.status if record.status is not None else 502,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            n=record.n,
            tool_calls=_proposed(record),
            reply_chars=_reply_chars(record),
            tool_results=[str(m["tool_call_id"]) for m in messages
                          if isinstance(m, dict) and m.get("role") == "tool"
                          and m.get("tool_call_id") is not None],
            prompt_chars=len(json.dumps(messages, ensure_ascii=False)),
            max_tokens=limit if isinstance(limit, int) else None,
            sent_ms=record.sent_ms, first_byte_ms=record.first_byte_ms, end_ms=record.end_ms,
            streamed=record.stream is not None,
            generation_ms=float(predicted) if isinstance(predicted, int | float) else None,
        )  # fmt: skip


def _proposed(record: ExchangeRecord) -> list[str]:
    if record.stream is not None:
        return [c.id or f"#{c.index}" for c in record.stream.tool_calls]
    reply = record.response_json if isinstance(record.response_json, dict) else {}
    choices = reply.get("choices") or [{}]
    message = (choices[0] if isinstance(choices[0], dict) else {}).get("message") or {}
    calls = message.get("tool_calls") or []
    return [str(c.get("id") or f"#{i}") for i, c in enumerate(calls) if isinstance(c, dict)]


def chat_completions(records: list[ExchangeRecord]) -> list[ExchangeRecord]:
    """The exchanges that were chat completions (POSTs to ``.../chat/completions``)."""
    return [r for r in records if r.method == "POST" and r.path.endswith("/chat/completions")]


def body_text(record: ExchangeRecord) -> str:
    """The request body as text (JSON re-serialized unescaped), for a search for secrets."""
    if record.request_text is not None:
        return record.request_text
    return json.dumps(record.request_json, ensure_ascii=False)


def split_base_url(base_url: str) -> tuple[str, str]:
    """``http://host:port/v1`` -> (``http://host:port``, ``/v1``): the proxy's upstream, and
    the path a client appends to the proxy's ``url``.

    >>> split_base_url("http://127.0.0.1:8000/v1/")
    ('http://127.0.0.1:8000', '/v1')
    """
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")


def _reply_chars(record: ExchangeRecord) -> int | None:
    if record.stream is not None:
        calls = [c.model_dump() for c in record.stream.tool_calls]
        return len(json.dumps([record.stream.content, calls], ensure_ascii=False))
    reply = record.response_json if isinstance(record.response_json, dict) else {}
    choices = reply.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message") or {}
    kept = [message.get("content"), message.get("tool_calls")]
    return len(json.dumps(kept, ensure_ascii=False))
