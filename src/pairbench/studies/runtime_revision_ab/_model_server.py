"""A scripted, llama.cpp-like Chat Completions server on 127.0.0.1 (a real HTTP server).

Answers ``POST /v1/chat/completions`` from the scenario scripts (``_scripts.reply_for``)
with ``usage`` and llama.cpp's ``timings``, and ``GET /props``, ``/slots``, ``/health``,
``/metrics`` and ``/v1/models``. Token counts are estimates (4 characters a token) and
timings are computed from them, so every answer is the same on every machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pairbench.studies.runtime_revision_ab._scripts import reply_for

MODEL = "minirt-scripted"
N_CTX = 16384
BUILD = "pairbench-scripted (llama.cpp-like) 1"


@dataclass
class ModelServer:
    """A running server: its ``base_url`` (ending in ``/v1``) and the requests it answered."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, body: dict[str, Any], usage: dict[str, int]) -> int:
        """Keep one answered request; its index."""
        with self.lock:
            self.requests.append({"body": body, "usage": usage})
            return len(self.requests)


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


def _timings(prompt_n: int, predicted_n: int) -> dict[str, float | int]:
    # A fixed speed (2000 t/s prompt, 50 t/s generation): plausible and reproducible.
    prompt_ms, predicted_ms = prompt_n / 2.0, predicted_n * 20.0
    return {
        "cache_n": 0, "prompt_n": prompt_n, "prompt_ms": prompt_ms,
        "prompt_per_token_ms": 0.5, "prompt_per_second": 2000.0,
        "predicted_n": predicted_n, "predicted_ms": predicted_ms,
        "predicted_per_token_ms": 20.0, "predicted_per_second": 50.0,
    }  # fmt: skip


def _completion(server: ModelServer, body: dict[str, Any]) -> dict[str, Any]:
    message = reply_for(body)
    prompt_n = _tokens(body.get("messages"))
    predicted_n = _tokens(message)
    usage = {"prompt_tokens": prompt_n, "completion_tokens": predicted_n,
             "total_tokens": prompt_n + predicted_n}  # fmt: skip
    index = server.record(body, usage)
    return {
        "id": f"chatcmpl-scripted-{index}",
        "object": "chat.completion",
        "created": 1704067200 + index,
        "model": str(body.get("model") or MODEL),
        "system_fingerprint": "b1-scripted",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": usage,
        "timings": _timings(prompt_n, predicted_n),
    }  # fmt: skip


def _metrics(server: ModelServer) -> str:
    """llama-server's ``/metrics`` counters, from what was served: prompt tokens processed
    (no prompt cache here, so none reused), tokens generated, and one decode per prompt
    batch plus one per generated token; nothing is in flight between requests."""
    with server.lock:
        prompt = sum(r["usage"]["prompt_tokens"] for r in server.requests)
        predicted = sum(r["usage"]["completion_tokens"] for r in server.requests)
        count = len(server.requests)
    values = {
        "prompt_tokens_total": ("counter", prompt),
        "prompt_tokens_cached_total": ("counter", 0),
        "tokens_predicted_total": ("counter", predicted),
        "n_decode_total": ("counter", count + predicted),
        "requests_total": ("counter", count),  # not llama.cpp's: kept for older readers
        "requests_processing": ("gauge", 0),
    }
    lines = []
    for name, (kind, value) in values.items():
        lines += [f"# TYPE llamacpp:{name} {kind}", f"llamacpp:{name} {value}"]
    return "\n".join(lines) + "\n"


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: tests read results, not access logs

        def _send(self, status: int, payload: Any, kind: str = "application/json") -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path == "/health":
                self._send(200, {"status": "ok"})
            elif path == "/props":
                self._send(200, {"build_info": BUILD, "total_slots": 1, "model_path": MODEL,
                                 "default_generation_settings": {"n_ctx": N_CTX,
                                 "params": {"temperature": 0.8, "seed": -1}}})  # fmt: skip
            elif path == "/slots":
                self._send(200, [{"id": 0, "n_ctx": N_CTX, "is_processing": False}])
            elif path in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [
                    {"id": MODEL, "object": "model", "owned_by": "pairbench"}]})  # fmt: skip
            elif path == "/metrics":
                self._send(200, _metrics(server).encode(), "text/plain; version=0.0.4")
            else:
                self._send(404, {"error": {"message": f"no route {path}"}})

        def do_POST(self) -> None:
            path = self.path.split("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, {"error": {"message": "the body is not JSON"}})
                return
            if path in ("/v1/chat/completions", "/chat/completions"):
                self._send(200, _completion(server, body))
            else:
                self._send(404, {"error": {"message": f"no route {path}"}})

    return Handler


@contextmanager
def serve_model(port: int = 0) -> Iterator[ModelServer]:
    """Serve the scripted model on loopback (``port`` 0: a free one) until the block ends.

    **Usage**::

        with serve_model() as server:
            run_scenario(worktree, "AR-001", server.base_url, workdir, seed=1, timeout_s=60)
            len(server.requests)   # requests answered so far
    """
    server = ModelServer(base_url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(server))
    httpd.daemon_threads = True
    server.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, name="scripted-model", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
