"""The "Model requests" section: per arm, each model request's tokens and the server's and
client's timings (only where an agent reported its requests: the ``openai`` agent)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Section, Table

TITLE = "Model requests"
HEADERS = [
    "Arm",
    "Requests (failed)",
    "Prompt tokens",
    "Generated tokens",
    "Latency",
    "Time to first token",
    "Prompt speed",
    "Generation speed",
]
LEAD = (
    "One row per arm, over every model request of its trials (each turn is a request). "
    "Each cell is the median with the 10th–90th percentiles and the number of requests that "
    "recorded it. Tokens are the server's usage (measured); prompt and generation speeds are "
    "the server's own timings (llama.cpp `timings`); latency and time to first token are the "
    "agent's client clock, and time to first token exists only for streamed requests."
)


def _cell(spread: Mapping[str, Any], unit: str, digits: int = 1) -> str:
    if spread["median"] is None:
        return f.NA
    low, high = f.number(spread["p10"], digits=digits), f.number(spread["p90"], digits=digits)
    return f"{f.number(spread['median'], unit, digits)} ({low}–{high}; n={spread['n']})"


def model_requests(s: Mapping[str, Any]) -> Section | None:
    """The section, or none when no arm's agent reported its model requests."""
    arms = s.get("model_requests") or []
    if not any(a["requests"] for a in arms):
        return None
    rows = [
        [
            a["arm"],
            f"{a['requests']:,} ({a['failed']}) in {a['trials_with_requests']}/{a['trials']} "
            "trials",
            _cell(a["prompt_tokens"], "", 0),
            _cell(a["completion_tokens"], "", 0),
            _cell(a["latency_ms"], "ms", 0),
            _cell(a["first_token_ms"], "ms", 0) if a["first_token_ms"]["n"] else "not streamed",
            _cell(a["prompt_per_second"], "tok/s"),
            _cell(a["generation_per_second"], "tok/s"),
        ]
        for a in arms
    ]
    return Section(TITLE, [LEAD, Table(HEADERS, rows)])
