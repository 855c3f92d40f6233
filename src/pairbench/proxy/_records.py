"""What the recording proxy writes: one ``ExchangeRecord`` per request, one JSON line each.

The log is append-only: each line is written whole and flushed, and a reader drops a torn
last line (a proxy killed mid-write), so every line read is a whole exchange.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from pydantic import Field

from pairbench._errors import ProxyError
from pairbench._model import Frozen
from pairbench.store._jsonl import read_jsonl

MODEL_PATHS = ("/chat/completions", "/completions", "/completion")
"""Request paths (suffixes) that reach the model: the ones sampling and seeds are read from."""


class ToolCall(Frozen):
    """One tool call a streamed response proposed, its deltas joined."""

    index: int
    id: str | None = None
    name: str = ""
    arguments: str = ""
    """The JSON string the model wrote, as streamed."""


class StreamSummary(Frozen):
    """A Server-Sent Events response, aggregated from its chunks."""

    chunks: int
    """``data:`` events, ``[DONE]`` excluded."""
    content: str | None = None
    """Every ``delta.content`` joined (None when there was none)."""
    reasoning_content: str | None = None
    """Every ``delta.reasoning_content`` joined (llama.cpp's reasoning models)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    final_chunk: dict[str, Any] | None = None
    """The last chunk carrying ``usage`` or ``timings`` (llama.cpp puts both there)."""
    done: bool = False
    """Whether ``data: [DONE]`` arrived (a stream cut short lacks it)."""
    unparsed: int = 0
    """``data:`` events that were not JSON."""


class ExchangeRecord(Frozen):
    """One request the proxy received, what it forwarded and what came back."""

    n: int
    """Exchange number, 1-based, in order of arrival at the proxy."""
    label: str | None = None
    """The scenario/campaign label: ``X-Pairbench-Label`` on the request, else the proxy's."""
    method: str
    path: str
    """The request's path as the client sent it (forwarded under the upstream's base)."""
    query: str = ""
    request_sha256: str
    """SHA-256 of the request body's bytes exactly as forwarded."""
    request_json: Any = None
    """The request body parsed as JSON (None when it is not JSON; see ``request_text``)."""
    request_text: str | None = None
    """The request body as text when it is not JSON (empty bodies: None)."""
    status: int | None = None
    """The upstream's HTTP status; None when no response came (see ``error``)."""
    error: str | None = None
    """Why the exchange failed: the upstream's error message, or the connection failure."""
    sent_at: str
    """UTC ISO 8601 time the request was forwarded."""
    first_byte_at: str | None = None
    """UTC time the first response body bytes arrived from the upstream."""
    end_at: str
    """UTC time the response ended (or failed)."""
    sent_ms: float
    """``time.monotonic()`` in ms when forwarded (comparable within one machine's boot)."""
    first_byte_ms: float | None = None
    end_ms: float
    response_sha256: str | None = None
    """SHA-256 of the response body's bytes as passed to the client."""
    response_json: Any = None
    """A JSON (non-streamed) response body, parsed."""
    response_text: str | None = None
    """A response body that is neither JSON nor a stream, as text."""
    stream: StreamSummary | None = None
    """A ``text/event-stream`` response, aggregated."""
    usage: dict[str, Any] | None = None
    """The response's ``usage`` (a stream's final chunk's)."""
    timings: dict[str, Any] | None = None
    """llama.cpp's ``timings`` (``prompt_n``, ``cache_n``, ``predicted_n``, ...)."""
    system_fingerprint: str | None = None
    model: str | None = None
    """The ``model`` the response named."""

    @property
    def is_model_request(self) -> bool:
        """A POST to a completion route: sent to the model (refused or not)."""
        return self.method == "POST" and self.path.rstrip("/").endswith(MODEL_PATHS)

    @property
    def body(self) -> dict[str, Any] | None:
        """The request body when it is a JSON object."""
        return self.request_json if isinstance(self.request_json, dict) else None


class RecordLog:
    """The append-only JSONL file one proxy writes; safe to call from several threads.

    **Usage**::

        log = RecordLog(tmp / "exchanges.jsonl")
        log.append(record)
        records = read_records(log.path)
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._handle = path.open("ab")
        _cut_torn_tail(path, self._handle.fileno())

    def append(self, record: ExchangeRecord) -> None:
        line = record.model_dump_json().encode("utf-8") + b"\n"
        with self._lock:
            self._handle.write(line)  # one buffered write: the line lands whole
            self._handle.flush()

    def close(self) -> None:
        with self._lock:
            self._handle.close()


def _cut_torn_tail(path: Path, fd: int) -> None:
    """Drop a torn last line left by a killed writer, so the next line starts clean."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        os.ftruncate(fd, data.rfind(b"\n") + 1)


def read_records(path: Path) -> list[ExchangeRecord]:
    """Every whole record of a log, by exchange number; a torn last line is dropped.

    A corrupt line anywhere else is a ``ProxyError``: the log was edited, not cut short.

    >>> read_records(Path("/nonexistent/exchanges.jsonl"))
    []
    """

    def refuse(number: int, why: str) -> ProxyError:
        return ProxyError(
            f"{path}: line {number} is not an exchange record ({why}). Fix: "
            "the log is append-only; restore it from the run, do not edit it"
        )

    return sorted(read_jsonl(path, ExchangeRecord, refuse), key=lambda r: r.n)
