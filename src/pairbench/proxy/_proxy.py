"""``RecordingProxy``: a loopback HTTP proxy in front of a model server that records every
exchange (the request body actually sent, the response, usage, timings, timestamps).

The system under test is pointed at the proxy instead of the model, so what reached the
model is proven from bytes the proxy forwarded, not from what the agent meant to send.
Responses pass through chunk by chunk as they arrive (a stream's first token reaches the
client before the model has finished); the record is written once the response ends.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pairbench._clock import now_iso
from pairbench._errors import ProxyError
from pairbench.proxy._records import ExchangeRecord, RecordLog, read_records
from pairbench.proxy._sse import error_message, response_fields

LABEL_HEADER = "x-pairbench-label"
"""A request header naming the exchange's label; stripped before forwarding."""
_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
        "trailer", "transfer-encoding", "upgrade", "content-length", "host"}  # fmt: skip
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def _now_ms() -> float:
    return round(time.monotonic() * 1000, 3)


class RecordingProxy:
    """A recording proxy on 127.0.0.1 (a free port) in front of ``upstream``.

    **Usage**::

        with RecordingProxy("http://127.0.0.1:8080", run_dir / "exchanges.jsonl") as proxy:
            proxy.label = "AR-001"                     # or per request: X-Pairbench-Label
            client = OpenAI(base_url=f"{proxy.url}/v1", api_key="none")
            ...
            records = proxy.records()                  # one ExchangeRecord per request
    """

    def __init__(
        self,
        upstream: str,
        log: Path,
        *,
        label: str | None = None,
        timeout_s: float = 600.0,
        before_forward: Callable[[int], None] | None = None,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProxyError(
                f"upstream {upstream!r} is not an http URL. Fix: pass the model server's base "
                "URL, e.g. http://127.0.0.1:8080"
            )
        self.upstream = upstream.rstrip("/")
        self.log_path = log
        self.label = label
        """The label of exchanges without an ``X-Pairbench-Label`` header (settable)."""
        self.timeout_s = timeout_s
        self.before_forward = before_forward
        """Called with the exchange number before a request is forwarded (in a worker thread;
        the request waits for it): a round boundary, e.g. for a workspace snapshot."""
        self.url = ""
        """``http://127.0.0.1:PORT`` once started."""
        self._count = 0
        self._count_lock = threading.Lock()
        self._client: httpx.AsyncClient | None = None
        self._log: RecordLog | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> RecordingProxy:
        """Bind 127.0.0.1 port 0, serve in a background thread, return once listening."""
        if self._thread is not None:
            raise ProxyError("the proxy is already running. Fix: stop() it before start()")
        self._log = RecordLog(self.log_path)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self._sock = sock
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        # Quiet: an exchange cut short at stop() is in the record (its error says so); the
        # server's own "graceful shutdown exceeded" traceback would only alarm the reader.
        config = uvicorn.Config(
            self.app(), log_level="critical", access_log=False, lifespan="on",
            # the upstream's own Server and Date headers pass through instead
            server_header=False, date_header=False, timeout_graceful_shutdown=5,
        )  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="pairbench-proxy",
            daemon=True,
        )  # fmt: skip
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise ProxyError("the recording proxy did not start within 10 s")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving (in-flight exchanges get 5 s to finish) and close the log."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=15)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(timeout=5)
        if self._sock is not None:
            self._sock.close()
        if self._log is not None:
            self._log.close()
        self._server = self._thread = self._sock = self._log = None

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def records(self) -> list[ExchangeRecord]:
        """Every exchange recorded so far (read back from the log)."""
        return read_records(self.log_path)

    # -- serving --------------------------------------------------------------------------
    def app(self) -> Starlette:
        """The ASGI app (one catch-all route); the HTTP client lives for its lifespan."""

        @asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            timeout = httpx.Timeout(self.timeout_s, connect=10.0)
            # trust_env off: an HTTP(S)_PROXY in the environment must not reroute loopback
            async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
                self._client = client
                yield
            self._client = None

        route = Route("/{path:path}", self._forward, methods=_METHODS)
        return Starlette(routes=[route], lifespan=lifespan)

    def _next(self) -> int:
        with self._count_lock:  # numbered on arrival
            self._count += 1
            return self._count

    async def _forward(self, request: Request) -> Response:
        n = self._next()
        raw = await request.body()
        label = request.headers.get(LABEL_HEADER) or self.label
        headers = [
            (k, v)
            for k, v in request.headers.raw
            if k.decode("latin-1").lower() not in _HOP | {LABEL_HEADER, "accept-encoding"}
        ]
        # Identity encoding: the record keeps the bytes the client received, uncompressed.
        headers.append((b"accept-encoding", b"identity"))
        query = request.url.query
        url = self.upstream + request.url.path + (f"?{query}" if query else "")
        base: dict[str, Any] = {
            "n": n, "label": label, "method": request.method, "path": request.url.path,
            "query": query, "request_sha256": hashlib.sha256(raw).hexdigest(),
            **_request_body(raw), "sent_at": now_iso(), "sent_ms": _now_ms(),
        }  # fmt: skip
        assert self._client is not None  # set by the lifespan before any request
        if self.before_forward is not None:
            await anyio.to_thread.run_sync(self.before_forward, n)
        try:
            upstream = self._client.build_request(request.method, url, headers=headers, content=raw)
            response = await self._client.send(upstream, stream=True)
        except httpx.HTTPError as exc:
            reason = f"the upstream {self.upstream} could not be reached: {exc!r}"
            self._write(base, None, b"", "", reason, None)
            body = {"error": {"message": reason, "type": "proxy_error",
                              "code": "upstream_unreachable"}}  # fmt: skip
            return JSONResponse(body, status_code=502)
        except BaseException:
            # Cancelled while waiting for the answer (the client gave up, or the proxy is
            # stopping): the request was sent all the same, so it is recorded.
            reason = "cancelled before the upstream answered (client gone or proxy stopped)"
            self._write(base, None, b"", "", reason, None)
            raise
        kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _HOP]
        content_type = response.headers.get("content-type", "")

        async def relay() -> AsyncIterator[bytes]:
            parts: list[bytes] = []
            first: tuple[str, float] | None = None
            failure: str | None = None
            try:
                async for chunk in response.aiter_raw():
                    if chunk and first is None:
                        first = (now_iso(), _now_ms())
                    parts.append(chunk)
                    yield chunk
            except httpx.HTTPError as exc:
                failure = f"the upstream broke off the response: {exc!r}"
                raise
            except BaseException:  # cancelled: the client went away mid-response
                failure = "the client disconnected before the response ended"
                raise
            finally:
                self._write(base, response.status_code, b"".join(parts), content_type,
                            failure, first)  # fmt: skip
                with anyio.CancelScope(shield=True):
                    await response.aclose()

        out = StreamingResponse(relay(), status_code=response.status_code)
        # Raw pairs, not a dict: repeated headers (Set-Cookie) pass through as sent.
        out.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in kept]
        return out

    def _write(
        self,
        base: dict[str, Any],
        status: int | None,
        raw: bytes,
        content_type: str,
        failure: str | None,
        first: tuple[str, float] | None,
    ) -> None:
        fields = response_fields(raw, content_type)
        error = failure
        if error is None and status is not None and status >= 400:
            error = error_message(fields.response_json, fields.response_text, status)
        record = ExchangeRecord(
            **base,
            status=status,
            error=error,
            first_byte_at=first[0] if first else None,
            first_byte_ms=first[1] if first else None,
            end_at=now_iso(),
            end_ms=_now_ms(),
            response_sha256=hashlib.sha256(raw).hexdigest() if status is not None else None,
            **fields._asdict(),
        )
        assert self._log is not None
        self._log.append(record)


def _request_body(raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        return {"request_json": json.loads(raw)}
    except ValueError:
        return {"request_text": raw.decode("utf-8", errors="replace")}
