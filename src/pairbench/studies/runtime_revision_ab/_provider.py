"""The provider requests of a run, read from the recording proxy's exchanges: the
independent count (the runtime's own events may be missing or wrong).

The forwarding is ``pairbench.proxy.RecordingProxy``'s; this module only maps its records.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

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

    @classmethod
    def from_record(cls, record: ExchangeRecord) -> ProviderRequest:
        """The request an exchange record shows (its status 502 when none came back)."""
        sent = record.body or {}
        usage = record.usage or {}
        seed, temperature = sent.get("seed"), sent.get("temperature")
        return cls(
            sha256=record.request_sha256,
            seed=seed if isinstance(seed, int) else None,
            temperature=float(temperature) if isinstance(temperature, int | float) else None,
            status=record.status if record.status is not None else 502,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )


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
