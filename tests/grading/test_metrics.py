"""Per-attempt metrics: usage and turns pass through as reported; cold starts per tool."""

from typing import Any

from pairbench.agents import AgentOutput
from pairbench.grading._metrics import CLIENT_CLOCK, compute_metrics
from pairbench.store import Metric, Metrics, usage_metrics

USAGE_NAMES = (
    "input_tokens",
    "uncached_input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
    "total_tokens",
)


def test_usage_split_and_turns_are_kept_with_their_provenance() -> None:
    usage = usage_metrics(
        source="provider usage",
        total_input=1000,
        cache_read=600,
        cache_creation=Metric.missing("the provider does not report cache writes"),
        output=80,
    )
    output = AgentOutput(
        final_answer="42", turns=Metric.measured(4, "agent turns"), **usage._asdict()
    )
    m = compute_metrics(12.5, [], None, output)
    for name in USAGE_NAMES:
        assert getattr(m, name) == getattr(usage, name), name
    assert m.uncached_input_tokens.value == 400.0 and m.total_tokens.value == 1080.0
    assert m.cache_creation_input_tokens.reason == "the provider does not report cache writes"
    assert m.turns == Metric.measured(4, "agent turns")


def test_without_usage_or_without_an_agent_run_everything_is_missing() -> None:
    reported_nothing = compute_metrics(1.0, [], None, AgentOutput(final_answer="x"))
    never_ran = compute_metrics(1.0, [], None, None)
    for name in (*USAGE_NAMES, "turns"):
        for m, reason in (
            (reported_nothing, None),
            (never_ran, "the agent did not run"),
        ):
            metric = getattr(m, name)
            assert metric.provenance == "missing" and metric.value is None, name
            if reason:
                assert metric.reason == reason
    assert reported_nothing.total_tokens.reason == "no model usage reported"


def _calls(*calls: tuple[str | None, str, float | None]) -> list[dict[str, object]]:
    """Tool calls and their results, in order: (server, tool, client_ms or None: no result)."""
    events: list[dict[str, object]] = []
    for i, (server, tool, ms) in enumerate(calls):
        events.append({"kind": "tool_call", "id": str(i), "server": server, "tool": tool})
        if ms is not None:
            events.append({"kind": "tool_result", "id": str(i), "client_ms": ms})
    return events


def test_cold_start_per_tool_is_its_first_call_over_its_later_median() -> None:
    events = _calls(
        ("tracker", "get_issue", 300.0),
        ("tracker", "list", 50.0),
        ("tracker", "get_issue", 100.0),
        ("docs", "get_issue", 80.0),  # another server's tool of the same name
        ("tracker", "list", 90.0),
        ("tracker", "get_issue", 140.0),
        ("tracker", "list", 70.0),
        ("tracker", "list", 20.0),
        (None, "Read", 5.0),
    )
    m = compute_metrics(1.0, events, None, None)
    by_tool = m.cold_start_ms_by_tool
    assert list(by_tool) == ["Read", "docs.get_issue", "tracker.get_issue", "tracker.list"]
    # get_issue: 300 - median(100, 140) = 300 - 120.
    assert by_tool["tracker.get_issue"] == Metric.measured(180.0, CLIENT_CLOCK)
    # list: 50 - median(90, 70, 20) = 50 - 70: negative, and kept.
    assert by_tool["tracker.list"] == Metric.measured(-20.0, CLIENT_CLOCK)
    # One call of a tool (of a server, or a local one) has no cold start.
    for key in ("docs.get_issue", "Read"):
        assert by_tool[key].provenance == "missing" and by_tool[key].value is None
        assert by_tool[key].reason == f"fewer than two timed calls of {key}"
    # Pooled over every tool: 300 - median(50, 100, 80, 90, 140, 70, 20, 5) = 300 - 75.
    assert m.cold_start_ms == Metric.measured(225.0, CLIENT_CLOCK)


def test_an_untimed_call_does_not_count_towards_a_cold_start() -> None:
    # The first call got no result: the first *timed* call is the cold one.
    events = _calls(("s", "t", None), ("s", "t", 40.0), ("s", "t", 10.0), ("s", "u", None))
    m = compute_metrics(1.0, events, None, None)
    assert m.cold_start_ms_by_tool["s.t"] == Metric.measured(30.0, CLIENT_CLOCK)
    assert m.cold_start_ms_by_tool["s.u"].reason == "fewer than two timed calls of s.u"
    assert m.cold_start_ms == Metric.measured(30.0, CLIENT_CLOCK)
    solo = compute_metrics(1.0, _calls(("s", "t", 40.0)), None, None)
    assert solo.cold_start_ms.reason == "fewer than two timed tool calls"
    assert solo.cold_start_ms_by_tool["s.t"].provenance == "missing"
    assert compute_metrics(1.0, [], None, None).cold_start_ms_by_tool == {}


def test_a_record_from_before_per_tool_cold_start_still_reads() -> None:
    stored = compute_metrics(1.0, _calls(("s", "t", 4.0), ("s", "t", 2.0)), None, None)
    old = stored.model_dump(mode="json")
    del old["cold_start_ms_by_tool"]
    assert Metrics.model_validate(old).cold_start_ms_by_tool == {}


def test_model_requests_come_from_the_events_and_garbage_stays_unrecorded() -> None:
    body, reply = "a" * 64, "b" * 64
    events: list[dict[str, Any]] = [
        {"kind": "model_request", "turn": 1, "ok": True, "latency_ms": 812.5,
         "first_chunk_ms": 90.0, "body_sha256": body, "reply_sha256": reply,
         "usage": {"prompt_tokens": 1200, "completion_tokens": 34,
                   "prompt_tokens_details": {"cached_tokens": 0}},
         "timings": {"prompt_ms": 3900.1, "prompt_per_second": 307.6, "predicted_ms": 600.0,
                     "predicted_per_second": 56.7}},
        # An adapter may write anything: a digest that is no SHA-256, a token count that is a
        # string or a bool, non-finite numbers, no usage at all.
        {"kind": "model_request", "turn": 2, "ok": False, "latency_ms": float("nan"),
         "body_sha256": "not-hex", "usage": None,
         "timings": {"prompt_per_second": True, "predicted_per_second": "fast"}},
        {"kind": "model_request", "usage": {"prompt_tokens": "12", "completion_tokens": -1}},
        {"kind": "message", "text": "not a request"},
    ]  # fmt: skip
    first, second, third = compute_metrics(1.0, events, None, None).model_requests
    assert (first.turn, first.ok, first.latency_ms, first.first_token_ms) == (1, True, 812.5, 90.0)
    assert (first.prompt_tokens, first.completion_tokens, first.cached_tokens) == (1200, 34, 0)
    assert (first.prompt_ms, first.prompt_per_second) == (3900.1, 307.6)
    assert (first.generation_ms, first.generation_per_second) == (600.0, 56.7)
    assert (first.body_sha256, first.reply_sha256) == (body, reply)
    assert (second.turn, second.ok, second.latency_ms, second.body_sha256) == (2, False, None, None)
    assert second.prompt_per_second is None and second.generation_per_second is None
    assert second.prompt_tokens is None and second.reply_sha256 is None
    assert (third.turn, third.prompt_tokens, third.completion_tokens) == (None, None, None)
