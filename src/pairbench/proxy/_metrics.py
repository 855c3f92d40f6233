"""Did anyone else use the model server? Its ``/metrics`` counters read before and after a
window, against what the proxy forwarded in that window.

llama.cpp's counters (``tools/server/server-task.cpp``): ``prompt_tokens_total`` (prompt
tokens processed, cached ones excluded), ``prompt_tokens_cached_total``,
``tokens_predicted_total``, ``n_decode_total``; the gauge ``requests_processing``. It counts
no requests, so requests are compared through tokens: every completed request processes at
least one prompt token (llama.cpp re-evaluates the last one even on a full cache hit).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from pairbench._clock import now_iso
from pairbench._model import Frozen
from pairbench.proxy._records import ExchangeRecord
from pairbench.proxy._upstream import fetch

PREFIX = "llamacpp:"
Status = Literal["clean", "interference", "unexplained", "unavailable"]


class MetricsSnapshot(Frozen):
    """The upstream's ``/metrics`` at one moment (or why it could not be read)."""

    base_url: str
    taken_at: str
    monotonic_ms: float
    """``time.monotonic()`` in ms, on the proxy's clock: which records fall in the window."""
    values: dict[str, float] | None = None
    """``llamacpp:`` samples without the prefix (``prompt_tokens_total`` -> 12.0)."""
    reason: str | None = None
    """Why ``values`` is None."""


def parse_prometheus(text: str) -> dict[str, float]:
    """The unlabelled ``llamacpp:`` samples of a Prometheus text page.

    >>> parse_prometheus("# TYPE llamacpp:n_decode_total counter\\nllamacpp:n_decode_total 12\\n")
    {'n_decode_total': 12.0}
    """
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith(PREFIX) or "{" in line:
            continue
        name, _, value = line.partition(" ")
        try:
            out[name.removeprefix(PREFIX)] = float(value.split()[0])
        except (ValueError, IndexError):
            continue
    return out


def read_metrics(base_url: str) -> MetricsSnapshot:
    """Read ``/metrics`` now; unavailable (off, not llama.cpp, no counters) says why.

    **Usage**::

        before = read_metrics(server_url)
        ...                                    # the scenario, through the proxy
        verdict = interference(before, read_metrics(server_url), proxy.records())
    """
    stamp = {"base_url": base_url, "taken_at": now_iso(),
             "monotonic_ms": round(time.monotonic() * 1000, 3)}  # fmt: skip
    page = fetch(base_url, "/metrics", text=True)
    if page.missing is not None:
        return MetricsSnapshot(**stamp, reason=page.missing)
    values = parse_prometheus(str(page.data))
    needed = [n for n in _COUNTERS.values() if n not in values]
    if needed:
        reason = f"/metrics has no {PREFIX}{needed[0]} counter (not a llama.cpp server?)"
        return MetricsSnapshot(**stamp, reason=reason)
    return MetricsSnapshot(**stamp, values=values)


_COUNTERS = {
    "prompt_tokens": "prompt_tokens_total",
    "cached_tokens": "prompt_tokens_cached_total",
    "predicted_tokens": "tokens_predicted_total",
}
"""The proxy's total -> the server counter it must equal."""


class CounterCheck(Frozen):
    """One quantity counted by the server and by the proxy over the same window."""

    name: str
    server: float | None = None
    """The server's delta (after - before); None when the server does not count it."""
    proxy: float | None = None
    """What the proxy forwarded; None when some response did not say (see ``note``)."""
    note: str = ""


class Interference(Frozen):
    """``interference``'s verdict for one window."""

    status: Status
    """``clean``: the server counted exactly what the proxy forwarded; ``interference``:
    more (another client used it); ``unexplained``: less, or a counter went backwards (a
    restart), or a record straddles the window; ``unavailable``: cannot be told."""
    reason: str
    checks: list[CounterCheck] = Field(default_factory=list)
    requests: list[int] = Field(default_factory=list)
    """The exchanges counted as inside the window."""


def _proxy_totals(records: list[ExchangeRecord]) -> tuple[dict[str, float | None], list[str]]:
    totals: dict[str, float | None] = dict.fromkeys(_COUNTERS, 0.0)
    notes: list[str] = []
    for r in records:
        if r.status is None or r.status >= 300:
            continue  # refused or unreached: the model processed nothing
        t, u = r.timings or {}, r.usage or {}
        cached = t.get("cache_n", (u.get("prompt_tokens_details") or {}).get("cached_tokens"))
        prompt = t.get("prompt_n")
        if prompt is None and u.get("prompt_tokens") is not None and cached is not None:
            prompt = u["prompt_tokens"] - cached
        predicted = t.get("predicted_n", u.get("completion_tokens"))
        for name, value in (("prompt_tokens", prompt), ("cached_tokens", cached),
                            ("predicted_tokens", predicted)):  # fmt: skip
            current = totals[name]
            if isinstance(value, int | float) and current is not None:
                totals[name] = current + value
            elif current is not None:
                totals[name] = None
                notes.append(f"exchange #{r.n} reported no {name} (no timings or usage)")
    return totals, notes


def interference(
    before: MetricsSnapshot, after: MetricsSnapshot, records: Iterable[ExchangeRecord]
) -> Interference:
    """Compare the server's counter deltas with the proxy's totals for the records whose
    exchange lies inside [``before``, ``after``] (others are ignored).

    **Usage**::

        verdict = interference(before, after, proxy.records())
        verdict.status   # "interference" when a client called the server directly
    """
    for snap in (before, after):
        if snap.values is None:
            return Interference(status="unavailable", reason=f"metrics unavailable: {snap.reason}")
    assert before.values is not None and after.values is not None
    lo, hi = before.monotonic_ms, after.monotonic_ms
    chat = [r for r in records if r.is_model_request]
    inside = [r for r in chat if r.sent_ms >= lo and r.end_ms <= hi]
    straddling = [r.n for r in chat if r.sent_ms < hi and r.end_ms > lo and r not in inside]
    totals, notes = _proxy_totals(inside)
    checks = [CounterCheck(name="requests", proxy=float(len(inside)),
                           note="llama.cpp's /metrics counts no requests")]  # fmt: skip
    status: Status = "clean"
    reasons: list[str] = []
    for name, counter in _COUNTERS.items():
        delta = after.values[counter] - before.values[counter]
        proxy = totals[name]
        check = CounterCheck(name=name, server=delta, proxy=proxy)
        checks.append(check)
        if delta < 0:
            status = "unexplained"
            reasons.append(f"{counter} went backwards ({delta:+g}): the server restarted")
        elif proxy is None:
            if status == "clean":
                status = "unavailable"
        elif delta > proxy:
            status = "interference"
            reasons.append(f"{counter} rose by {delta:g} but the proxy forwarded {proxy:g}")
        elif delta < proxy and status != "interference":
            status = "unexplained"
            reasons.append(f"{counter} rose by {delta:g}, less than the {proxy:g} forwarded")
    busy = after.values.get("requests_processing", 0.0)
    if busy > 0:
        status = "interference"
        reasons.append(
            f"{busy:g} request(s) still processing at the window's end, none of them one the "
            "proxy had finished (read `after` once the scenario's requests are done)"
        )
    if straddling and status == "clean":
        status = "unexplained"
        reasons.append(f"exchange(s) {straddling} straddle the window")
    if status == "unavailable":
        reasons = notes[:3]
    reason = "; ".join(reasons) or (
        f"the server counted exactly what the proxy forwarded ({len(inside)} requests)"
    )
    return Interference(status=status, reason=reason, checks=checks,
                        requests=[r.n for r in inside])  # fmt: skip
