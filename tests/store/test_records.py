"""Stored records: the usage helper every adapter builds its token metrics with, and the
result file's usage split and models seen (old result files still load)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.report_builders import make_result
from pairbench.store import Metric, TrialResult, Usage, usage_metrics

SOURCE = "provider usage"
NO_WRITES = Metric.missing("the provider does not report cache writes")


def _values(u: Usage) -> dict[str, float | None]:
    return {k: m.value for k, m in u._asdict().items()}


def test_anthropic_style_parts_give_the_input_and_the_total() -> None:
    u = usage_metrics(source=SOURCE, uncached=3, cache_creation=2400, cache_read=100, output=120)
    assert _values(u) == {
        "input_tokens": 2503.0,
        "uncached_input_tokens": 3.0,
        "cache_creation_input_tokens": 2400.0,
        "cache_read_input_tokens": 100.0,
        "output_tokens": 120.0,
        "total_tokens": 2623.0,
    }
    assert all(m.provenance == "measured" and m.source == SOURCE for m in u)


def test_openai_style_total_and_cached_part_give_the_uncached_part() -> None:
    # prompt_tokens includes cached_tokens; cache writes are not reported.
    u = usage_metrics(
        source=SOURCE, total_input=1000, cache_read=800, cache_creation=NO_WRITES, output=50
    )
    assert u.input_tokens.value == 1000.0 and u.cache_read_input_tokens.value == 800.0
    assert u.uncached_input_tokens.value == 200.0  # every input token not read from cache
    assert u.cache_creation_input_tokens == NO_WRITES
    assert u.total_tokens.value == 1050.0


def test_what_is_not_reported_stays_missing_never_zero() -> None:
    u = usage_metrics(source=SOURCE)
    assert all(m.provenance == "missing" and m.value is None for m in u)
    assert {m.reason for m in u} == {"no model usage reported"}
    # A total without a split: the split is missing with the caller's reason, the total known.
    only = usage_metrics(source=SOURCE, total_input=100, output=5, missing="no cache split")
    assert (only.input_tokens.value, only.total_tokens.value) == (100.0, 105.0)
    for m in (only.uncached_input_tokens, only.cache_read_input_tokens):
        assert m.value is None and m.reason == "no cache split"
    # No output count: no total, with the output's reason.
    no_out = usage_metrics(source=SOURCE, uncached=1, cache_creation=2, cache_read=3)
    assert no_out.input_tokens.value == 6.0
    assert no_out.total_tokens.value is None
    assert no_out.total_tokens.reason == "no model usage reported"
    # A part missing leaves the sum missing: 1 + 3 is not the input when creation is unknown.
    part = usage_metrics(source=SOURCE, uncached=1, cache_creation=NO_WRITES, cache_read=3)
    assert part.input_tokens.value is None and part.input_tokens.reason == NO_WRITES.reason


def test_measured_and_estimated_are_never_added() -> None:
    est = Metric(value=40.0, provenance="estimated", estimator="chars/4 v1")
    u = usage_metrics(source=SOURCE, total_input=100, output=est)
    assert u.output_tokens == est
    assert u.total_tokens.value is None
    assert u.total_tokens.reason == "total tokens: its parts mix measured and estimated values"
    all_est = usage_metrics(source="chars/4 v1", total_input=10, output=4, provenance="estimated")
    assert all_est.total_tokens == Metric(
        value=14.0, provenance="estimated", estimator="chars/4 v1"
    )


def test_a_cached_count_above_the_input_is_missing_not_negative() -> None:
    u = usage_metrics(source=SOURCE, total_input=10, cache_read=20)
    assert u.uncached_input_tokens.value is None
    assert "negative" in (u.uncached_input_tokens.reason or "")


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9))
def test_input_is_the_sum_of_its_parts_and_total_adds_output(
    uncached: int, creation: int, read: int, output: int
) -> None:
    split = usage_metrics(
        source=SOURCE, uncached=uncached, cache_creation=creation, cache_read=read, output=output
    )
    assert split.input_tokens.value == uncached + creation + read
    assert split.total_tokens.value == uncached + creation + read + output
    # The same usage reported OpenAI-style (a total and its cached parts) agrees.
    whole = usage_metrics(
        source=SOURCE,
        total_input=uncached + creation + read,
        cache_creation=creation,
        cache_read=read,
        output=output,
    )
    assert whole == split


def test_usage_split_and_models_round_trip_through_a_result_file() -> None:
    usage = usage_metrics(source=SOURCE, uncached=7, cache_creation=0, cache_read=900, output=33)
    r = make_result("a", "t", 0, usage=usage, models=("claude-sonnet-4-5", "claude-haiku-4-5"))
    back = TrialResult.model_validate_json(r.model_dump_json())
    assert back == r
    assert back.metrics is not None
    assert back.metrics.cache_read_input_tokens.value == 900.0
    assert back.metrics.total_tokens.value == 940.0
    assert back.models_seen == ["claude-sonnet-4-5", "claude-haiku-4-5"]


def test_a_result_file_from_before_the_split_still_loads_with_it_missing() -> None:
    data = json.loads(make_result("a", "t", 0).model_dump_json())
    for name in (
        "uncached_input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "total_tokens",
    ):
        del data["metrics"][name]
    del data["models_seen"]
    old = TrialResult.model_validate(data)
    assert old.metrics is not None and old.models_seen == []
    for m in (old.metrics.uncached_input_tokens, old.metrics.total_tokens):
        assert m.value is None and m.provenance == "missing"
        assert m.reason == "not recorded: the record predates this metric"


@pytest.mark.parametrize("value", [0, 0.0])
def test_a_reported_zero_is_a_measured_zero(value: float) -> None:
    # Zero cache reads reported by the provider are a measurement, not a missing value.
    u = usage_metrics(source=SOURCE, uncached=5, cache_creation=value, cache_read=value, output=1)
    assert u.cache_read_input_tokens == Metric.measured(0.0, SOURCE)
    assert u.input_tokens.value == 5.0


def test_a_missing_metric_is_one_frozen_value_per_reason() -> None:
    import pydantic

    first, again = (
        Metric.missing("no model usage reported"),
        Metric.missing("no model usage reported"),
    )
    assert first is again  # shared by every record that lacks it...
    with pytest.raises(pydantic.ValidationError):
        first.reason = "changed"  # type: ignore[misc]  # ...which nobody can change
    assert Metric.missing("another reason").reason == "another reason"
