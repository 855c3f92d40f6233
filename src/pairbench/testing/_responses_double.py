"""A local OpenAI Responses API server for tests, real enough for the real Codex CLI.

Served by ``pairbench.testing.responses_double`` (``start_responses_double``, or
``python -m``)::

    with start_responses_double(script={"server_error_on": [1]}) as double:
        base_url = f"{double.url}/v1"      # codex: model_providers.<name>.base_url
        ...
        double.requests       # every POST /v1/responses body, in arrival order
        double.usages         # the usage of every response that carried one
        double.paths          # every "METHOD /path" hit (websocket attempts: "WEBSOCKET /path")
        double.tool_outputs   # every function_call_output text received (once per call_id)

Routes: ``POST /v1/responses`` (SSE when ``stream`` is true, else one JSON ``response``),
``GET /v1/models``; any other path answers 404, and a websocket upgrade (codex's
``responses_websockets`` transport) answers 426 in the OpenAI error shape, so a client that
tries websockets falls back to HTTP at once.

**The stream** (``pairbench.testing._responses_stream``) carries the events codex 0.171.0
parses, with the API's shapes, ending in ``response.completed`` whose ``response.usage`` is
``{input_tokens, input_tokens_details: {cached_tokens[, cache_write_tokens]}, output_tokens,
output_tokens_details: {reasoning_tokens}, total_tokens}``.

**Replies** come from ``pairbench.testing._responses_convert`` (the chat double's
``decide``, fed a converted request), never from a fixed list.

**Usage** is a deterministic count (``count_tokens``) of the request's segments: the
instructions, the tools, and each input item without its ``id``. ``cached_tokens`` is the
longest run of leading segments equal to those of an earlier request the double answered
(0 on the first); ``output_tokens`` counts the reply's text and calls, plus the script's
``reasoning_tokens`` (reported in ``output_tokens_details``); with ``cache_writes``,
``input_tokens_details.cache_write_tokens`` is the input not read from cache.

**Errors by request number** (1-based over ``POST /v1/responses``): ``rate_limit_on`` (429
``rate_limit_exceeded``), ``quota_on`` (429 ``insufficient_quota``), ``server_error_on``
(500), ``hang_on`` (no answer at all until the double stops), ``stall_on`` (the stream
stops after ``response.in_progress``; its usage is never delivered, so not in ``usages``);
``fail_auth`` answers 401 to every path, ``api_key`` answers 401 unless the bearer token
matches.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from pairbench._model import Frozen
from pairbench.testing._chat_double import count_tokens
from pairbench.testing._chat_double_refusals import error, refusal_for
from pairbench.testing._responses_convert import output_text, reply_to
from pairbench.testing._responses_stream import output_items, sse_lines, stream_events


class ResponsesScript(Frozen):
    """How the double misbehaves (everything else is decided from the request)."""

    rate_limit_on: list[int] = Field(default_factory=list)
    """Request numbers answered 429 ``rate_limit_exceeded``."""
    quota_on: list[int] = Field(default_factory=list)
    """Request numbers answered 429 ``insufficient_quota``."""
    server_error_on: list[int] = Field(default_factory=list)
    """Request numbers answered 500 ``server_error``."""
    hang_on: list[int] = Field(default_factory=list)
    """Request numbers never answered (the connection stays open until the double stops)."""
    stall_on: list[int] = Field(default_factory=list)
    """Request numbers whose stream stops after ``response.in_progress`` (until the double
    stops): the case codex's ``stream_idle_timeout_ms`` is for."""
    fail_auth: bool = False
    """Answer 401 ``invalid_api_key`` to every request on every path."""
    api_key: str | None = None
    """Answer 401 unless ``Authorization: Bearer <api_key>``."""
    model: str | None = None
    """The model named in replies (default: the request's ``model``)."""
    reasoning_tokens: int = Field(default=0, ge=0)
    """Reasoning tokens added to every reply's ``output_tokens`` (and reported as such)."""
    cache_writes: bool = False
    """Report ``input_tokens_details.cache_write_tokens``: the input not read from cache."""


@dataclass(frozen=True)
class ResponsesExchange:
    """One ``POST /v1/responses`` the double received and what it answered."""

    n: int
    body: dict[str, Any]
    status: int
    """The HTTP status (0: never answered, ``hang_on``)."""
    usage: dict[str, Any] | None
    output: list[dict[str, Any]]
    """The output items answered (empty for a refusal)."""


def _segments(body: Mapping[str, Any]) -> list[str]:
    """The request as its cacheable parts, in the order a prompt cache sees them."""
    items = body.get("input")
    listed = items if isinstance(items, list) else [{"type": "message", "content": items}]
    parts = [str(body.get("instructions") or ""), json.dumps(body.get("tools") or [])]
    for item in listed:
        kept = {k: v for k, v in item.items() if k != "id"} if isinstance(item, dict) else item
        parts.append(json.dumps(kept, sort_keys=True))
    return parts


def _tokens(segment: str) -> int:
    return count_tokens(segment) if segment not in ("", "[]") else 0


@dataclass
class ResponsesDouble:
    """A running double: ``url`` (no ``/v1``), and what it received and answered."""

    script: ResponsesScript
    url: str = ""
    exchanges: list[ResponsesExchange] = field(default_factory=list)
    on_exchange: Callable[[ResponsesExchange], None] | None = None
    """Called (on the server's thread) after each responses request is recorded."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _closing: threading.Event = field(default_factory=threading.Event)
    _received: int = 0
    _paths: list[str] = field(default_factory=list)
    _outputs: dict[str, str] = field(default_factory=dict)
    _answered: list[list[str]] = field(default_factory=list)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every ``POST /v1/responses`` body received, in arrival order."""
        with self._lock:
            return [e.body for e in self.exchanges]

    @property
    def usages(self) -> list[dict[str, Any]]:
        """The usage of every response that carried one."""
        with self._lock:
            return [e.usage for e in self.exchanges if e.usage is not None]

    @property
    def paths(self) -> list[str]:
        """Every request as ``"METHOD /path"`` (websocket upgrades as ``"WEBSOCKET /path"``)."""
        with self._lock:
            return list(self._paths)

    @property
    def tool_outputs(self) -> list[str]:
        """Every ``function_call_output`` text received, once per ``call_id``, as sent."""
        with self._lock:
            return list(self._outputs.values())

    def close(self) -> None:
        """Release every hanging request (called before the server stops)."""
        self._closing.set()

    def app(self) -> Callable[[Scope, Receive, Send], Any]:
        routes = Starlette(
            routes=[
                Route("/v1/responses", self._responses, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/{path:path}", self._other, methods=["GET", "POST", "PUT", "DELETE"]),
            ]
        )

        async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] in ("http", "websocket"):
                headers = dict(scope.get("headers") or [])
                upgrade = headers.get(b"upgrade", b"").lower() == b"websocket"
                ws = scope["type"] == "websocket" or upgrade
                with self._lock:
                    self._paths.append(f"{'WEBSOCKET' if ws else scope['method']} {scope['path']}")
            await routes(scope, receive, send)

        return asgi

    def _refusal(self, request: Request, n: int | None) -> JSONResponse | None:
        return refusal_for(self.script, request.headers.get("authorization", ""), n)

    async def _models(self, request: Request) -> Response:
        refusal = self._refusal(request, None)
        if refusal is not None:
            return refusal
        name = self.script.model or "double"
        model = {"id": name, "object": "model", "created": 0, "owned_by": "pairbench"}
        return JSONResponse({"object": "list", "data": [model]})

    async def _other(self, request: Request) -> Response:
        refusal = self._refusal(request, None)
        if refusal is not None:
            return refusal
        if request.headers.get("upgrade", "").lower() == "websocket":
            msg = "WebSocket transport is not supported here; use HTTP streaming."
            return error(426, msg, "invalid_request_error", "websocket_not_supported")
        msg = f"Unknown request URL: {request.method} {request.url.path}."
        return error(404, msg, "invalid_request_error", "unknown_url")

    def _record(self, exchange: ResponsesExchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)
        if self.on_exchange is not None:
            self.on_exchange(exchange)

    def _usage(self, body: Mapping[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
        segments = _segments(body)
        sizes = [_tokens(s) for s in segments]
        with self._lock:
            shared = 0
            for earlier in self._answered:
                same = 0
                while same < min(len(earlier), len(segments)) and earlier[same] == segments[same]:
                    same += 1
                shared = max(shared, same)
            self._answered.append(segments)
        cached, total_in = sum(sizes[:shared]), sum(sizes)
        reasoning = self.script.reasoning_tokens
        made = [i["content"][0]["text"] if i["type"] == "message" else
                {"name": i["name"], "arguments": i["arguments"]} for i in items]  # fmt: skip
        output = max(1, sum(count_tokens(m) for m in made)) + reasoning
        details: dict[str, Any] = {"cached_tokens": cached}
        if self.script.cache_writes:
            details["cache_write_tokens"] = total_in - cached
        return {"input_tokens": total_in, "input_tokens_details": details,
                "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
                "total_tokens": total_in + output}  # fmt: skip

    async def _responses(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return error(400, "The body is not valid JSON.", "invalid_request_error", None)
        if not isinstance(body, dict):
            return error(400, "The body must be a JSON object.", "invalid_request_error", None)
        with self._lock:  # numbered on arrival, so concurrent requests never share a number
            self._received += 1
            n = self._received
            for item in body.get("input") or []:
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    call_id = str(item.get("call_id"))
                    self._outputs.setdefault(call_id, output_text(item.get("output")))
        refusal = self._refusal(request, n)
        if refusal is not None:
            self._record(ResponsesExchange(n, body, refusal.status_code, None, []))
            return refusal
        if n in self.script.hang_on:
            self._record(ResponsesExchange(n, body, 0, None, []))
            while not self._closing.is_set():
                await asyncio.sleep(0.05)
            return Response(status_code=503)
        items = output_items(n, reply_to(body))
        usage = self._usage(body, items)
        stalled = n in self.script.stall_on
        self._record(ResponsesExchange(n, body, 200, None if stalled else usage, items))
        response = {"id": f"resp_double_{n}", "object": "response",
                    "created_at": int(time.time()), "status": "completed",
                    "model": self.script.model or str(body.get("model", "double")),
                    "output": items, "usage": usage}  # fmt: skip
        if not body.get("stream"):
            return JSONResponse(response)
        lines = sse_lines(stream_events(response, items))
        if stalled:
            return StreamingResponse(self._stalled(lines[:2]), media_type="text/event-stream")
        return StreamingResponse(iter(lines), media_type="text/event-stream")

    async def _stalled(self, lines: list[str]) -> AsyncIterator[str]:
        for line in lines:
            yield line
        while not self._closing.is_set():
            await asyncio.sleep(0.05)
