"""One Chat Completions request over urllib, with sampling sent explicitly."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


class ProviderError(Exception):
    """The endpoint could not be reached or answered with something unusable."""


@dataclass(frozen=True)
class Settings:
    """Where and how to ask: ``base_url`` ends before ``/chat/completions``."""

    base_url: str
    model: str
    temperature: float
    seed: int
    max_tokens: int = 1024
    timeout_s: float = 120.0
    api_key: str = "minirt"


@dataclass(frozen=True)
class Completion:
    """The assistant message of the first choice and the usage the endpoint reported."""

    message: dict[str, Any]
    usage: dict[str, Any] | None


def complete(
    settings: Settings, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> Completion:
    """Send one request; ``ProviderError`` for transport failures or a malformed reply."""
    body = {
        "model": settings.model,
        "messages": messages,
        "tools": tools,
        "tool_choice": "auto",
        # Sent on every request: a server default is not evidence of what was sampled.
        "temperature": settings.temperature,
        "seed": settings.seed,
        "max_tokens": settings.max_tokens,
    }
    request = urllib.request.Request(
        settings.base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode("utf-8"),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {settings.api_key}",
        },
        method="POST",
    )
    # No proxy from the environment: the endpoint is what the caller named.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=settings.timeout_s) as response:
            payload = json.loads(response.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ProviderError(f"chat completion failed: {exc}") from None
    try:
        message = payload["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ProviderError("chat completion without choices[0].message") from None
    usage = payload.get("usage")
    return Completion(message=dict(message), usage=usage if isinstance(usage, dict) else None)
