"""The double's llama.cpp side: ``/health``, ``/props``, ``/slots`` and ``/metrics`` shaped
like ``llama-server``'s (copied from the real server's output), served when
``ChatScript.llama_cpp`` is set.

Counters follow llama.cpp's meaning: ``prompt_tokens_total`` counts prompt tokens processed
(excluding cached ones), ``prompt_tokens_cached_total`` the reused ones,
``tokens_predicted_total`` the generated ones; llama.cpp counts no requests. ``/slots`` shows
a slot as processing while a request is in flight and, after one, the sampling it applied.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from pairbench.testing._chat_script import ChatScript

DEFAULT_PARAMS: dict[str, Any] = {
    "seed": 4294967295, "temperature": 0.800000011920929, "top_k": 40,
    "top_p": 0.949999988079071, "min_p": 0.05000000074505806, "typical_p": 1.0,
    "repeat_last_n": 64, "repeat_penalty": 1.0, "presence_penalty": 0.0,
    "frequency_penalty": 0.0, "max_tokens": -1, "n_predict": -1, "stream": False,
}  # fmt: skip
"""llama-server's defaults (``/props`` ``default_generation_settings.params``, a subset)."""
N_CTX = 4096
_CAPS = {
    "supports_object_arguments": True, "supports_parallel_tool_calls": True,
    "supports_string_content": True, "supports_system_role": True,
    "supports_tool_calls": True, "supports_tools": True, "supports_typed_content": False,
}  # fmt: skip
_COUNTERS = (
    ("prompt_tokens_total", "Number of prompt tokens processed, excluding cached tokens"),
    ("prompt_tokens_cached_total", "Number of prompt tokens reused from the cache"),
    ("tokens_predicted_total", "Number of generation tokens processed"),
    ("n_decode_total", "Total number of llama_decode() calls"),
)


@dataclass
class LlamaState:
    """What the double's llama.cpp endpoints report, updated by every chat request."""

    slots: int = 1
    counters: dict[str, int] = field(default_factory=lambda: {n: 0 for n, _ in _COUNTERS})
    busy: int = 0
    last_params: dict[str, Any] | None = None
    last_task: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def started(self, n: int, body: Mapping[str, Any]) -> None:
        """A chat request is being processed (its slot turns busy)."""
        applied = {k: body.get(k, v) for k, v in DEFAULT_PARAMS.items()}
        if "max_tokens" in body:
            applied["n_predict"] = body["max_tokens"]
        with self._lock:
            self.busy += 1
            self.last_params, self.last_task = applied, n

    def finished(self, usage: Mapping[str, Any] | None) -> None:
        """The request's response ended: its slot is idle, its tokens counted."""
        with self._lock:
            self.busy = max(0, self.busy - 1)
            if usage is None:
                return
            cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
            completion = int(usage.get("completion_tokens") or 0)
            self.counters["prompt_tokens_total"] += int(usage.get("prompt_tokens") or 0) - cached
            self.counters["prompt_tokens_cached_total"] += cached
            self.counters["tokens_predicted_total"] += completion
            self.counters["n_decode_total"] += 1 + completion  # one prompt batch, one per token

    def props(self, fingerprint: str, alias: str, model_path: str | None) -> dict[str, Any]:
        settings = {"params": DEFAULT_PARAMS, "n_ctx": N_CTX}
        return {
            "default_generation_settings": settings, "total_slots": self.slots,
            "model_alias": alias, "model_path": model_path or "", "endpoint_slots": True,
            "endpoint_props": False, "endpoint_metrics": True, "chat_template": "",
            "chat_template_caps": _CAPS, "build_info": fingerprint, "is_sleeping": False,
        }  # fmt: skip

    def slot_list(self) -> list[dict[str, Any]]:
        with self._lock:
            out: list[dict[str, Any]] = []
            for i in range(self.slots):
                slot: dict[str, Any] = {"id": i, "n_ctx": N_CTX, "speculative": False}
                slot["is_processing"] = i < self.busy
                if i == 0 and self.last_params is not None:
                    slot.update(id_task=self.last_task, params=dict(self.last_params))
                out.append(slot)
            return out

    def metrics(self) -> str:
        """Prometheus text, as llama-server's ``/metrics`` writes it."""
        with self._lock:
            lines: list[str] = []
            gauges = [("requests_processing", "Number of requests processing", self.busy)]
            items = [(n, h, "counter", self.counters[n]) for n, h in _COUNTERS]
            for name, help_text, kind, value in items + [(n, h, "gauge", v) for n, h, v in gauges]:
                lines += [f"# HELP llamacpp:{name} {help_text}", f"# TYPE llamacpp:{name} {kind}"]
                lines.append(f"llamacpp:{name} {value}")
            return "\n".join(lines) + "\n"

    def routes(self, script: Callable[[], ChatScript]) -> list[Route]:
        """``GET /health``, ``/props``, ``/slots``, ``/metrics``; ``script`` is read per
        request, so a test may swap the double's script (its fingerprint) mid-run."""

        async def serve(request: Request) -> Response:
            s, name = script(), request.url.path.strip("/")
            if name == "metrics":
                return Response(self.metrics(), media_type="text/plain; version=0.0.4")
            if name == "props":
                return JSONResponse(self.props(s.system_fingerprint, s.model or "double",
                                               s.model_path))  # fmt: skip
            if name == "slots":
                return JSONResponse(self.slot_list())
            return JSONResponse({"status": "ok"})

        return [Route(f"/{name}", serve, methods=["GET"])
                for name in ("health", "props", "slots", "metrics")]  # fmt: skip
