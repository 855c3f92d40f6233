"""What the proxy measured of an attempt's model use: requests, and the usage the server
reported on each response, with its coverage.

The runner fills an attempt's turns and token metrics from this when the agent reported
none, so a runtime that prints nothing about its usage still gets the usage the proxy saw
(and a report never says "not measured" for it). Tokens are measured only when every model
request's response carried usage; otherwise they stay missing with the coverage ``k of n``.

>>> summary = proxy_usage([])
>>> summary.requests, summary.coverage
(0, '0 of 0')
"""

from __future__ import annotations

from collections.abc import Iterable

from pairbench._model import Frozen
from pairbench.proxy._records import ExchangeRecord

SOURCE = "server usage via pairbench's proxy"
"""``Metric.source`` of a count the proxy measured."""


class ProxyUsage(Frozen):
    """One attempt's model requests and the usage their responses reported."""

    requests: int
    """Model requests (POSTs to a completion route) the proxy forwarded."""
    measured: int
    """Requests whose response reported both ``prompt_tokens`` and ``completion_tokens``."""
    prompt_tokens: int
    """Sum over the measured requests (every input token, cached ones included)."""
    completion_tokens: int
    cached_tokens: int | None
    """``prompt_tokens_details.cached_tokens`` summed, when every measured response gave it."""
    models: tuple[str, ...]
    """The ``model`` each response named, in request order (unnamed ones left out)."""

    @property
    def complete(self) -> bool:
        """Every request reported usage (and there was at least one)."""
        return self.requests > 0 and self.measured == self.requests

    @property
    def coverage(self) -> str:
        return f"{self.measured} of {self.requests}"


def _count(usage: dict[str, object], key: str) -> int | None:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def proxy_usage(records: Iterable[ExchangeRecord]) -> ProxyUsage:
    """The usage of ``records`` (one attempt's, already chosen by label)."""
    requests = measured = prompt = completion = cached = 0
    cached_known = True
    models: list[str] = []
    for record in records:
        if not record.is_model_request:
            continue
        requests += 1
        if record.model:
            models.append(record.model)
        usage = record.usage or {}
        ins, outs = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
        if ins is None or outs is None:
            continue
        measured += 1
        prompt, completion = prompt + ins, completion + outs
        details = usage.get("prompt_tokens_details")
        hit = _count(details, "cached_tokens") if isinstance(details, dict) else None
        cached_known = cached_known and hit is not None
        cached += hit or 0
    return ProxyUsage(
        requests=requests,
        measured=measured,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=cached if cached_known and measured else None,
        models=tuple(models),
    )
