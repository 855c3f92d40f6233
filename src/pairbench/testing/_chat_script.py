"""How a chat double misbehaves: the script it is started with (everything else it decides
from the request). Read by the double and by its llama-server routes."""

from __future__ import annotations

from pydantic import Field

from pairbench._model import Frozen


class ChatScript(Frozen):
    """How the double misbehaves (everything else is decided from the request)."""

    rate_limit_on: list[int] = Field(default_factory=list)
    quota_on: list[int] = Field(default_factory=list)
    server_error_on: list[int] = Field(default_factory=list)
    unavailable_on: list[int] = Field(default_factory=list)
    """Requests answered 503 ``Loading model``, as llama-server does while it starts."""
    omit_usage_on: list[int] = Field(default_factory=list)
    fail_auth: bool = False
    api_key: str | None = None
    model: str | None = None
    """The model named in replies (default: the request's ``model``)."""
    system_fingerprint: str = "fp_pairbench_double"
    timings: bool = False
    """Add llama.cpp-style ``timings`` to replies (on the last chunk when streaming)."""
    delay_s: float = Field(default=0.0, ge=0)
    reject_file_parts: bool = False
    """Answer a request carrying a file content part with 400 (an endpoint without files)."""
    chunk_delay_s: float = Field(default=0.0, ge=0)
    """Pause between streamed chunks (a slow model: the first chunk leaves before the rest)."""
    llama_cpp: bool = False
    """Also serve llama-server's ``/health``, ``/props``, ``/slots`` and ``/metrics``."""
    slots: int = Field(default=1, ge=1)
    """``total_slots`` in ``/props`` (with ``llama_cpp``)."""
    model_path: str | None = None
    """``model_path`` in ``/props`` (with ``llama_cpp``): a GGUF's path, or none."""
