"""A local Anthropic Messages API server for tests: the real ``claude`` CLI runs against it.

Served by ``pairbench.testing.anthropic_double`` (``start_anthropic_double``, or
``python -m``). Routes:

- ``POST /v1/messages``: the reply as JSON, or as server-sent events when ``stream`` is true
  (``_anthropic_sse``). Replies are decided by the chat double's agent brain (``decide``: the
  replies the studies register, ``Study.double``, answered from tool results or an attached
  PDF) on the request converted to the Chat Completions shape
  (``_anthropic_convert``), and converted back to ``text`` / ``tool_use`` content blocks;
  ``stop_reason`` is ``tool_use`` or ``end_turn``. A request that is not one of those
  prompts is answered ``UNKNOWN``, except a *side request* (below), answered ``SIDE_REPLY``.
- ``POST /v1/messages/count_tokens``: ``{"input_tokens": N}``, the whole prompt's tokens.
- Anything else: 404 ``not_found_error``, recorded in ``paths`` like every hit. Claude Code
  2.1.197 sends ``HEAD /`` (a connection warm-up; it carries on after a 404) before its first
  ``POST /v1/messages?beta=true``.

**Main turns and side requests.** A *main turn* is a request of the agent loop: its body has
a ``tools`` key (Claude Code sends one on every turn, empty with ``--tools ""`` and no MCP
server) and asks for no structured output. A *side request* is anything else; Claude Code
2.1.197 in ``-p`` mode makes one, the session title, unless
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``: same model as the main loop, ``tools: []``,
``thinking: {"type": "disabled"}``, no ``cache_control``, a system prompt starting
"Generate a concise, sentence-case title" and ``output_config.format`` a JSON schema
``{"title": string}``. ``Exchange.main`` tells them apart; a side request is answered
``SIDE_REPLY``, or, when it asks for a JSON schema, JSON of that schema with every string
``SIDE_REPLY``.

**Usage** (``_anthropic_usage``): ``input_tokens`` (uncached), ``cache_creation_input_tokens``
and ``cache_read_input_tokens`` from the request's ``cache_control`` breakpoints and the
prefixes earlier answered requests wrote; ``output_tokens`` counted over the reply.

**Faults** (``AnthropicScript``; request numbers are 1-based over ``POST /v1/messages``):
``fail_auth`` answers 401 ``authentication_error`` to everything; ``api_key`` answers 401
unless ``x-api-key`` (or ``Authorization: Bearer``) matches; ``rate_limit_on`` 429
``rate_limit_error``, ``server_error_on`` 500 ``api_error``, ``overloaded_on`` 529
``overloaded_error``; ``hang_on`` accepts the request and never answers until the server
shuts down; ``delay_s`` waits before every reply. Error bodies have the real shape
``{"type": "error", "error": {"type", "message"}, "request_id"}``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pairbench._model import Frozen
from pairbench.testing._anthropic_convert import (
    blocks,
    document_data,
    from_schema,
    message_id,
    reply_blocks,
    request_id,
    to_chat,
)
from pairbench.testing._anthropic_sse import sse_events
from pairbench.testing._anthropic_usage import PromptCache, output_tokens
from pairbench.testing._chat_double import decide

if TYPE_CHECKING:
    import uvicorn

SIDE_REPLY = "Tracker lookup"
"""The answer to every side request (short and plain: it fits a title or a topic)."""
HUNG = 0
"""``Exchange.status`` of a ``hang_on`` request: accepted, never answered."""
_ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


class AnthropicScript(Frozen):
    """How the double misbehaves (everything else is decided from the request)."""

    fail_auth: bool = False
    """Answer 401 ``authentication_error`` to every request."""
    api_key: str | None = None
    """Answer 401 unless ``x-api-key`` or ``Authorization: Bearer`` carries this key."""
    rate_limit_on: list[int] = Field(default_factory=list)
    """``POST /v1/messages`` request numbers answered 429 ``rate_limit_error``."""
    server_error_on: list[int] = Field(default_factory=list)
    """Request numbers answered 500 ``api_error``."""
    overloaded_on: list[int] = Field(default_factory=list)
    """Request numbers answered 529 ``overloaded_error``."""
    hang_on: list[int] = Field(default_factory=list)
    """Request numbers accepted and never answered (until the server shuts down)."""
    retry_after_s: int | None = None
    """A ``retry-after`` header (seconds) on 429 and 529 answers, as the real API sends
    (Claude Code 2.1.197 waited exactly 1000 ms after a 429 with ``retry-after: 1``)."""
    delay_s: float = Field(default=0.0, ge=0)
    """Seconds to wait before every reply."""
    model: str | None = None
    """The model named in replies (default: the request's ``model``)."""


@dataclass(frozen=True)
class Exchange:
    """One ``POST /v1/messages`` request and what the double answered."""

    n: int
    """1-based, in arrival order."""
    body: dict[str, Any]
    status: int
    """The HTTP status answered (``HUNG``: never answered)."""
    usage: dict[str, int] | None
    """The reply's usage (None for an error)."""
    main: bool
    """A main agent turn (True) or a side request (see the module docstring)."""
    headers: dict[str, str]
    """The request's headers (lower-case names), e.g. ``x-api-key``, ``anthropic-beta``."""


@dataclass(frozen=True)
class Document:
    """A ``document`` block received: where, its media type and its decoded bytes' digest."""

    n: int
    where: str
    """``messages[i].content[j]``."""
    media_type: str
    sha256: str
    """Of the decoded bytes (base64 sources) or the UTF-8 text (text sources)."""
    size: int
    """Bytes, decoded."""


def _format(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    config = body.get("output_config")
    found = config.get("format") if isinstance(config, dict) else None
    return found if isinstance(found, dict) else None


def is_main_turn(body: Mapping[str, Any]) -> bool:
    """Whether a request is a turn of the agent loop (see the module docstring).

    >>> is_main_turn({"tools": [], "messages": []}), is_main_turn({"messages": []})
    (True, False)
    """
    return "tools" in body and _format(body) is None


def _error(status: int, kind: str, message: str, hit: int) -> JSONResponse:
    rid = request_id(hit)
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": rid}
    return JSONResponse(body, status_code=status, headers={"request-id": rid})


@dataclass
class AnthropicDouble:
    """A running double: ``url`` (no ``/v1``), and what it received and answered."""

    script: AnthropicScript
    url: str = ""
    on_exchange: Callable[[Exchange], None] | None = None
    """Called (on the server's thread) after each ``POST /v1/messages`` is recorded."""
    server: uvicorn.Server | None = None
    """Set by whoever serves the app: a ``hang_on`` request ends when it is told to exit."""
    _exchanges: list[Exchange] = field(default_factory=list)
    _paths: list[str] = field(default_factory=list)
    _documents: list[Document] = field(default_factory=list)
    _counted: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _received: int = 0
    _cache: PromptCache = field(default_factory=PromptCache)

    @property
    def exchanges(self) -> list[Exchange]:
        """Every ``POST /v1/messages`` exchange, by request number."""
        with self._lock:
            return sorted(self._exchanges, key=lambda e: e.n)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every ``POST /v1/messages`` body received, in arrival order."""
        return [e.body for e in self.exchanges]

    @property
    def usages(self) -> list[dict[str, int]]:
        """The usage of every reply that carried one, in request order."""
        return [e.usage for e in self.exchanges if e.usage is not None]

    @property
    def main_usages(self) -> list[dict[str, int]]:
        """The usages of the main agent turns only."""
        return [e.usage for e in self.exchanges if e.usage is not None and e.main]

    @property
    def documents(self) -> list[Document]:
        """Every ``document`` block received (by requests the double answered)."""
        with self._lock:
            return list(self._documents)

    @property
    def paths(self) -> list[str]:
        """Every request as ``"METHOD /path"`` (no query), served or not, in arrival order."""
        with self._lock:
            return list(self._paths)

    @property
    def counted(self) -> list[dict[str, Any]]:
        """Every ``POST /v1/messages/count_tokens`` body."""
        with self._lock:
            return list(self._counted)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self._count, methods=["POST"]),
                Route("/{rest:path}", self._unknown, methods=_ALL_METHODS),
            ]
        )

    def _hit(self, request: Request) -> int:
        """Record the hit; returns its number (1-based over every request received)."""
        with self._lock:
            self._paths.append(f"{request.method} {request.url.path}")
            return len(self._paths)

    def _auth(self, request: Request, hit: int) -> JSONResponse | None:
        s = self.script
        key = request.headers.get("x-api-key")
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if s.fail_auth or (s.api_key is not None and s.api_key not in (key, bearer)):
            return _error(401, "authentication_error", "invalid x-api-key", hit)
        return None

    async def _unknown(self, request: Request) -> Response:
        hit = self._hit(request)
        return self._auth(request, hit) or _error(404, "not_found_error", "Not Found", hit)

    async def _body(self, request: Request) -> dict[str, Any] | None:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    async def _count(self, request: Request) -> Response:
        hit = self._hit(request)
        refusal = self._auth(request, hit)
        if refusal is not None:
            return refusal
        body = await self._body(request)
        if body is None:
            return _error(400, "invalid_request_error", "The body is not valid JSON.", hit)
        with self._lock:
            self._counted.append(body)
        tokens = {"input_tokens": self._cache.input_tokens(body)}
        return JSONResponse(tokens, headers={"request-id": request_id(hit)})

    def _record(self, n: int, body: dict[str, Any], status: int, usage: Any, h: Any) -> None:
        exchange = Exchange(n, body, status, usage, is_main_turn(body), dict(h))
        with self._lock:
            self._exchanges.append(exchange)
        if self.on_exchange is not None:
            self.on_exchange(exchange)

    def _fault(self, n: int, hit: int) -> JSONResponse | None:
        s = self.script
        retry = {} if s.retry_after_s is None else {"retry-after": str(s.retry_after_s)}
        if n in s.rate_limit_on:
            msg = "Number of request tokens has exceeded your per-minute rate limit."
            return _with(_error(429, "rate_limit_error", msg, hit), retry)
        if n in s.server_error_on:
            return _error(500, "api_error", "Internal server error", hit)
        if n in s.overloaded_on:
            return _with(_error(529, "overloaded_error", "Overloaded", hit), retry)
        return None

    async def _hang(self) -> None:
        while self.server is None or not self.server.should_exit:
            await asyncio.sleep(0.05)

    async def _messages(self, request: Request) -> Response:
        hit = self._hit(request)
        body = await self._body(request)
        with self._lock:  # numbered on arrival, so concurrent requests never share a number
            self._received += 1
            n = self._received
        headers = request.headers
        if body is None:
            self._record(n, {}, 400, None, headers)
            return _error(400, "invalid_request_error", "The body is not valid JSON.", hit)
        refusal = self._auth(request, hit) or self._fault(n, hit)
        if refusal is not None:
            self._record(n, body, refusal.status_code, None, headers)
            return refusal
        if n in self.script.hang_on:
            self._record(n, body, HUNG, None, headers)
            await self._hang()
            return _error(500, "api_error", "The double shut down.", hit)
        self._note_documents(n, body)
        if self.script.delay_s:
            await asyncio.sleep(self.script.delay_s)
        message = self._reply(n, body)
        self._record(n, body, 200, message["usage"], headers)
        rid = {"request-id": request_id(hit)}
        if body.get("stream"):
            events = sse_events(message)
            return StreamingResponse(iter(events), media_type="text/event-stream", headers=rid)
        return JSONResponse(message, headers=rid)

    def _reply(self, n: int, body: dict[str, Any]) -> dict[str, Any]:
        wanted = _format(body)
        if is_main_turn(body):
            content, calls = decide(to_chat(body))
        elif wanted is not None and isinstance(wanted.get("schema"), dict):
            content, calls = json.dumps(from_schema(wanted["schema"], SIDE_REPLY)), []
        else:
            content, calls = SIDE_REPLY, []
        reply = reply_blocks(n, content, calls)
        usage = {**self._cache.usage(body), "output_tokens": output_tokens(reply)}
        return {
            "id": message_id(n),
            "type": "message",
            "role": "assistant",
            "model": self.script.model or str(body.get("model", "double")),
            "content": reply,
            "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }

    def _note_documents(self, n: int, body: Mapping[str, Any]) -> None:
        found: list[Document] = []
        for i, message in enumerate(body.get("messages") or []):
            content = message.get("content") if isinstance(message, dict) else None
            for j, block in enumerate(blocks(content) if isinstance(content, list) else []):
                data = document_data(block) if block.get("type") == "document" else None
                if data is not None:
                    digest = hashlib.sha256(data[1]).hexdigest()
                    found.append(Document(n, f"messages[{i}].content[{j}]", data[0], digest,
                                          len(data[1])))  # fmt: skip
        with self._lock:
            self._documents.extend(found)


def _with(response: JSONResponse, headers: Mapping[str, str]) -> JSONResponse:
    response.headers.update(headers)
    return response
