"""The proxy's account of an attempt's usage against the agent's: what fills a gap, what
overrides a claim, and what stays missing (``with_proxy_usage``)."""

from __future__ import annotations

from pairbench.agents._protocol import AgentOutput
from pairbench.proxy import ExchangeRecord
from pairbench.proxy._usage import proxy_usage
from pairbench.runner._model_proxy import with_proxy_usage
from pairbench.store._records import Metric, usage_metrics
from pairbench.store._transcript import Transcript


def _record(
    n: int, usage: dict[str, object] | None, path: str = "/v1/chat/completions"
) -> ExchangeRecord:
    return ExchangeRecord(
        n=n, label="a/t/0#1", method="POST", path=path, request_sha256="0" * 64,
        sent_at="2026-12-05T00:00:00Z", end_at="2026-12-05T00:00:01Z", sent_ms=0.0,
        end_ms=1.0, status=200, usage=usage, model="m-1",
    )  # fmt: skip


def test_only_completion_routes_count_and_cached_tokens_need_every_response() -> None:
    records = [
        _record(1, {"prompt_tokens": 10, "completion_tokens": 2,
                    "prompt_tokens_details": {"cached_tokens": 4}}),
        _record(2, {"prompt_tokens": 7, "completion_tokens": 3}),
        _record(3, None, path="/health"),
    ]  # fmt: skip
    usage = proxy_usage(records)
    assert (usage.requests, usage.measured, usage.prompt_tokens, usage.completion_tokens) == (
        2, 2, 17, 5,
    )  # fmt: skip
    assert usage.cached_tokens is None  # the second response did not say
    assert usage.complete and usage.models == ("m-1", "m-1")
    assert proxy_usage(records[:1]).cached_tokens == 4


def test_an_inflated_claim_is_replaced_by_the_proxys_count_and_named() -> None:
    claimed = usage_metrics(source="the runtime's own count", total_input=3277, output=40)
    output = AgentOutput("done", **claimed._asdict())
    usage = proxy_usage([_record(1, {"prompt_tokens": 120, "completion_tokens": 40})])
    transcript = Transcript(None)
    filled = with_proxy_usage(output, usage, transcript)
    assert filled.input_tokens.value == 120
    assert filled.input_tokens.source == (
        "server usage via pairbench's proxy; the agent claimed 3277"
    )
    assert filled.output_tokens == claimed.output_tokens  # agreed: the agent's stays
    assert filled.turns == Metric.measured(1, "model requests via pairbench's proxy")
    (event,) = transcript.of_kind("usage_mismatch")
    assert event["claimed"] == {"input_tokens": 3277, "total_tokens": 3317}
    assert event["proxy"] == {"input_tokens": 120, "total_tokens": 160}


def test_no_request_through_the_proxy_says_so_and_keeps_what_the_agent_said() -> None:
    said = Metric.missing("no provider request was made")
    output = AgentOutput("done", input_tokens=said)
    filled = with_proxy_usage(output, proxy_usage([]), Transcript(None))
    assert filled.input_tokens == said
    assert filled.output_tokens == Metric.missing("no model request reached pairbench's proxy")
    assert filled.turns == output.turns  # no request is no evidence about turns
