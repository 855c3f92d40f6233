"""A local Chat Completions server for tests: real HTTP on 127.0.0.1, replies from the request.

Served by ``pairbench.testing.chat_double`` (``start_chat_double``, or ``python -m``)::

    with start_chat_double(script={"rate_limit_on": [3]}) as double:
        client = AsyncOpenAI(base_url=f"{double.url}/v1", api_key="not-needed")
        ...
        double.requests          # every request body received, in arrival order
        double.usages            # the usage of every response that carried one

Routes: ``POST /v1/chat/completions`` (plain JSON, or SSE when ``stream`` is true, with a
final ``choices: []`` usage chunk when ``stream_options.include_usage``) and
``GET /v1/models``; with ``llama_cpp`` also llama-server's ``/health``, ``/props``, ``/slots``
and ``/metrics`` (see ``_chat_double_llama``).

**Replies come from the registered studies.** The double knows no study: each study's
``Study.double`` hook (its agent's brain) gets the request body and answers
``(content, tool_calls)`` when the request is one of its agent's, or ``None``; the first
answer wins, in the registry's order. A request no study recognises gets ``UNKNOWN`` ("I do
not know how to answer that."), so a broken tool path cannot pass. The brains read the
request through ``pairbench.testing._messages`` and decide from the tools offered and the
tool results received, never from a fixed list (the built-in studies' brains are each
study's ``_double.py``).

**Usage** is a deterministic count of the request (``count_tokens``: words and punctuation):
``prompt_tokens`` over every message and the offered tools; ``cached_tokens`` the part an
earlier turn already sent (tools and messages before the last assistant message; 0 on the
first turn); ``completion_tokens`` over the reply's text and tool calls.

**Refusals** (see ``_chat_double_refusals``): errors scripted by request number
(``rate_limit_on``, ``quota_on``, ``server_error_on``), 401 with ``fail_auth`` or a wrong
``api_key``, and 400 for file parts with ``reject_file_parts`` (file parts are recorded in
``double.files`` either way). ``omit_usage_on`` answers 200 without ``usage``.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pairbench import _registry
from pairbench.studies import DoubleReply, registered_studies
from pairbench.testing._chat_double_llama import LlamaState
from pairbench.testing._chat_double_refusals import (
    error,
    file_parts,
    file_record,
    file_refusal,
    refusal_for,
)
from pairbench.testing._chat_script import ChatScript, scripted_reply

UNKNOWN = "I do not know how to answer that."
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Exchange:
    """One chat request the double received and what it answered."""

    n: int
    body: dict[str, Any]
    status: int
    usage: dict[str, Any] | None
    body_sha256: str = ""
    """SHA-256 of the body's bytes as they arrived."""


# -- replies ----------------------------------------------------------------------------
def decide(body: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """The double's reply to a request: (content, tool_calls), from the first registered
    study whose agent sent it (``Study.double``), else ``UNKNOWN``."""
    for reply in _brains(tuple(_registry.names("studies"))):
        found = reply(body)
        if found is not None:
            return found
    return UNKNOWN, []


@functools.cache
def _brains(
    names: tuple[str, ...],
) -> tuple[Callable[[Mapping[str, Any]], DoubleReply | None], ...]:
    # Loaded once per set of registered studies (a plugin installed later is a new set).
    return tuple(s.double for s in registered_studies() if s.double is not None)


# -- usage ----------------------------------------------------------------------------------
def count_tokens(value: Any) -> int:
    """The double's tokenizer: words and punctuation marks of a value's JSON (or text)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return len(_TOKEN.findall(text))


def usage_for(
    body: Mapping[str, Any], content: str | None, calls: list[dict[str, Any]]
) -> dict[str, Any]:
    """Realistic usage for a reply, counted from the request (see the module docstring)."""
    messages = list(body.get("messages") or [])
    per_message = [count_tokens(m) for m in messages]
    tools = count_tokens(body["tools"]) if body.get("tools") else 0
    prompt = tools + sum(per_message) + 3
    last_assistant = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1
    )
    cached = tools + sum(per_message[:last_assistant]) if last_assistant >= 0 else 0
    completion = max(
        1, count_tokens(content or "") + sum(count_tokens(c["function"]) for c in calls)
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def _timings(usage: Mapping[str, Any]) -> dict[str, Any]:
    cache_n = int(usage["prompt_tokens_details"]["cached_tokens"])
    prompt_n, predicted_n = int(usage["prompt_tokens"]) - cache_n, int(usage["completion_tokens"])
    return {"cache_n": cache_n, "prompt_n": prompt_n, "prompt_ms": prompt_n * 0.5,
            "prompt_per_token_ms": 0.5, "prompt_per_second": 2000.0, "predicted_n": predicted_n,
            "predicted_ms": predicted_n * 20.0, "predicted_per_token_ms": 20.0,
            "predicted_per_second": 50.0}  # fmt: skip


# -- the server -------------------------------------------------------------------------------
@dataclass
class ChatDouble:
    """A running double: ``url`` (no ``/v1``), and what it received and answered."""

    script: ChatScript
    url: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    on_exchange: Callable[[Exchange], None] | None = None
    """Called (on the server's thread) after each chat request is recorded."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _received: int = 0
    _files: list[dict[str, Any]] = field(default_factory=list)
    _llama: LlamaState = field(default_factory=LlamaState)

    @property
    def files(self) -> list[dict[str, Any]]:
        """Every file content part received: ``{n, where, filename, mime, bytes, sha256,
        accepted}`` (``bytes``/``sha256`` of the decoded base64 data; None if undecodable)."""
        with self._lock:
            return list(self._files)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat request body received, in arrival order."""
        with self._lock:
            return [e.body for e in self.exchanges]

    @property
    def usages(self) -> list[dict[str, Any]]:
        """The usage of every response that carried one."""
        with self._lock:
            return [e.usage for e in self.exchanges if e.usage is not None]

    def _record(self, n: int, body: dict[str, Any], status: int, usage: Any, raw: bytes) -> None:
        exchange = Exchange(n, body, status, usage, hashlib.sha256(raw).hexdigest())
        with self._lock:
            self.exchanges.append(exchange)
        if self.on_exchange is not None:
            self.on_exchange(exchange)

    def app(self) -> Starlette:
        routes = [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]
        if self.script.llama_cpp:
            self._llama.slots = self.script.slots
            routes += self._llama.routes(lambda: self.script)
        return Starlette(routes=routes)

    async def _models(self, request: Request) -> Response:
        name = self.script.model or "double"
        model = {"id": name, "object": "model", "created": 0, "owned_by": "pairbench"}
        return JSONResponse({"object": "list", "data": [model]})

    async def _chat(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            return error(400, "The body is not valid JSON.", "invalid_request_error", None)
        with self._lock:  # numbered on arrival, so concurrent requests never share a number
            self._received += 1
            n = self._received
        refusal = refusal_for(self.script, request.headers.get("authorization", ""), n)
        if refusal is None and n in self.script.unavailable_on:  # llama-server, loading
            refusal = error(503, "Loading model", "unavailable_error", None)
        if refusal is not None:
            self._record(n, body, refusal.status_code, None, raw)
            return refusal
        parts = file_parts(body)
        accepted = not self.script.reject_file_parts
        with self._lock:
            self._files.extend(file_record(n, w, part, accepted) for w, part in parts)
        if parts and not accepted:
            self._record(n, body, 400, None, raw)
            return file_refusal(parts[0][0])
        self._llama.started(n, body)
        if self.script.delay_s:
            await asyncio.sleep(self.script.delay_s)
        content, calls = scripted_reply(self.script, body) or decide(body)
        stream = bool(body.get("stream"))
        with_usage = n not in self.script.omit_usage_on and (
            not stream or bool((body.get("stream_options") or {}).get("include_usage"))
        )
        counted = usage_for(body, content, calls)  # what /metrics counts, reported or not
        usage = counted if with_usage else None
        self._record(n, body, 200, usage, raw)
        head = {
            "id": f"chatcmpl-double-{n}",
            "created": int(time.time()),
            "model": self.script.model or str(body.get("model", "double")),
            "system_fingerprint": self.script.system_fingerprint,
        }
        # llama.cpp puts timings on a stream's last chunk with or without include_usage
        timed = counted if stream and n not in self.script.omit_usage_on else usage
        extra = {"timings": _timings(timed)} if timed and self.script.timings else {}
        finish = "tool_calls" if calls else "stop"
        if stream:
            chunks = _chunks(head, content, calls, finish, usage, extra)
            return StreamingResponse(self._paced(chunks, counted), media_type="text/event-stream")
        self._llama.finished(counted)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        reply = {**head, "object": "chat.completion", "choices": [choice], **extra}
        if usage is not None:
            reply["usage"] = usage
        return JSONResponse(reply)

    async def _paced(self, chunks: list[str], counted: dict[str, Any]) -> AsyncIterator[str]:
        try:
            for i, chunk in enumerate(chunks):
                if i and self.script.chunk_delay_s:
                    await asyncio.sleep(self.script.chunk_delay_s)
                yield chunk
        finally:
            self._llama.finished(counted)


def _chunks(
    head: dict[str, Any],
    content: str | None,
    calls: list[dict[str, Any]],
    finish: str,
    usage: dict[str, Any] | None,
    extra: dict[str, Any],
) -> list[str]:
    def chunk(delta: dict[str, Any] | None, finish_reason: str | None = None, **more: Any) -> str:
        choices = (
            [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
        )
        data = {**head, "object": "chat.completion.chunk", "choices": choices, **more}
        return f"data: {json.dumps(data)}\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    if content:
        half = len(content) // 2
        out += [chunk({"content": part}) for part in (content[:half], content[half:]) if part]
    for i, call in enumerate(calls):
        fn = call["function"]
        start = {
            "index": i,
            "id": call["id"],
            "type": "function",
            "function": {"name": fn["name"], "arguments": ""},
        }
        out.append(chunk({"tool_calls": [start]}))
        half = len(fn["arguments"]) // 2
        for part in (fn["arguments"][:half], fn["arguments"][half:]):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
    out.append(chunk({}, finish, **({} if usage else extra)))
    if usage is not None:
        out.append(chunk(None, usage=usage, **extra))
    out.append("data: [DONE]\n\n")
    return out
