"""The exact per-pair invariance check beside a token hypothesis, and the model-requests
section: every status fires on the pair built for it, and the report names the request."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from helpers.report_builders import make_result, make_run, with_requests
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.store._records import Metric, TrialResult

ARMS = ["local-stdio", "remote-http"]
H1 = {
    "id": "h1-tokens",
    "text": "Token cost is transport-invariant.",
    "kind": "equivalence",
    "metric": "total_tokens",
    "arms": ["remote-http", "local-stdio"],
    "margin": "2%",
}
# Per trial: (bodies, replies, tokens) of remote-http (A), then of local-stdio (B).
Side = tuple[list[str], list[str], float | None]
PAIRS: dict[int, tuple[Side, Side]] = {
    0: ((["b1", "b2"], ["r1", "r2"], 900.0), (["b1", "b2"], ["r1", "r2"], 900.0)),
    1: ((["b1", "b2"], ["r1", "r2"], 900.0), (["b1", "b2"], ["r1", "r2"], 900.0)),
    2: ((["b1", "b2", "b3x"], ["r1", "r2", "r3"], 1300.0),
        (["b1", "b2", "b3"], ["r1", "r2", "r3"], 1250.0)),
    3: ((["b1", "b2"], ["r1", "r2x"], 950.0), (["b1", "b2"], ["r1", "r2"], 900.0)),
    4: ((["b1"], ["r1"], 500.0), (["b1", "b2"], ["r1", "r2"], 900.0)),
}  # fmt: skip


def _total(value: float | None) -> dict[str, Metric]:
    metric = (
        Metric.measured(value, "llama-server usage") if value is not None else Metric.missing("x")
    )
    return {"total_tokens": metric}


def _pair(trial: int, a: Side, b: Side) -> list[TrialResult]:
    out = []
    for arm, (bodies, replies, tokens) in (("remote-http", a), ("local-stdio", b)):
        r = make_result(arm, "read-title", trial)
        assert r.metrics is not None
        r = r.model_copy(update={"metrics": r.metrics.model_copy(update=_total(tokens))})
        out.append(with_requests(r, bodies, replies, prompt_tokens=100, completion_tokens=10))
    return out


def _summary(pairs: dict[int, tuple[Side, Side]]) -> dict[str, Any]:
    results = [r for trial, (a, b) in pairs.items() for r in _pair(trial, a, b)]
    run = make_run(
        arms=ARMS,
        tasks=[{"id": "read-title", "labels": {}}],
        schedule=[],
        planned_trials=len(results),
        experiment_model={"hypotheses": [H1]},
    )
    return build_summary(run, results, [])


def _markdown(summary: dict[str, Any]) -> str:
    return render_markdown(summary)


def test_every_status_fires_on_its_pair_and_names_the_first_differing_request() -> None:
    s = _summary(PAIRS)
    inv = s["hypotheses"][0]["invariance"]
    assert (inv["pairs"], inv["checked"], inv["not_recorded"]) == (5, 5, 0)
    assert (inv["identical"], inv["violated"], inv["body"], inv["reply"], inv["count"]) == (
        2, 0, 1, 1, 1,
    )  # fmt: skip
    assert inv["holds"] is True
    assert inv["equal_values"] == 2
    named = {d["trial"]: (d["status"], d["request"]) for d in inv["divergences"]}
    assert named == {2: ("body", 3), 3: ("reply", 2), 4: ("count", 2)}
    text = _markdown(s)
    assert "2 of 5 checked pairs sent identical request bodies" in text
    assert "invariance holds" in text
    assert "read-title trial 2: request 3's body differed" in text
    assert "read-title trial 3: request 2 had the same body and got a different reply" in text
    assert "(A 1,300, B 1,250)" in text


def test_identical_requests_with_different_counts_violate_invariance() -> None:
    same = (["b1"], ["r1"])
    s = _summary({0: ((*same, 900.0), (*same, 900.0)), 1: ((*same, 901.0), (*same, 900.0))})
    inv = s["hypotheses"][0]["invariance"]
    assert (inv["identical"], inv["violated"], inv["holds"]) == (1, 1, False)
    assert inv["divergences"] == [
        {"task": "read-title", "trial": 1, "status": "violated", "request": None,
         "value_a": 901.0, "value_b": 900.0},
    ]  # fmt: skip
    text = _markdown(s)
    assert "invariance is violated" in text
    assert "every request and reply identical, yet the values differ (A 901, B 900)" in text


def test_pairs_without_digests_are_not_checked_and_say_so() -> None:
    results = [make_result(arm, "read-title", t) for t in range(3) for arm in ARMS]
    run = make_run(
        arms=ARMS,
        tasks=[{"id": "read-title", "labels": {}}],
        schedule=[],
        planned_trials=6,
        experiment_model={"hypotheses": [H1]},
    )
    s = build_summary(run, results, [])
    inv = s["hypotheses"][0]["invariance"]
    assert (inv["checked"], inv["not_recorded"], inv["holds"]) == (0, 3, None)
    assert "not checked: no pair has both arms' request digests" in _markdown(s)
    # No agent reported requests: no model-requests numbers and no section.
    assert s["model_requests"] == []
    assert "## Model requests" not in _markdown(s)


@pytest.mark.parametrize("metric", ["wall_ms"])
def test_a_hypothesis_on_another_metric_has_no_invariance(metric: str) -> None:
    s = _summary({0: PAIRS[0]})
    run = make_run(
        arms=ARMS, tasks=[{"id": "read-title", "labels": {}}], schedule=[], planned_trials=2,
        experiment_model={"hypotheses": [H1 | {"metric": metric, "kind": "difference"}]},
    )  # fmt: skip
    results = _pair(0, *PAIRS[0])
    assert build_summary(run, results, [])["hypotheses"][0]["invariance"] is None
    assert s["hypotheses"][0]["invariance"] is not None


def test_model_requests_section_pins_medians_and_percentiles() -> None:
    results = []
    prompts = {"remote-http": [120, 80, 100, 300], "local-stdio": [90, 95]}
    for arm, values in prompts.items():
        for trial, v in enumerate(values):
            r = make_result(arm, "read-title", trial)
            fields = {"prompt_tokens": v, "generation_per_second": 50.0 + v / 10}
            results.append(with_requests(r, ["b"], ["r"], **fields))
    run = make_run(
        arms=ARMS, tasks=[{"id": "read-title", "labels": {}}], schedule=[], planned_trials=6
    )
    s = build_summary(run, results, [])
    by_arm = {a["arm"]: a for a in s["model_requests"]}
    for arm, values in prompts.items():
        a = by_arm[arm]
        assert (a["requests"], a["failed"], a["trials_with_requests"]) == (
            len(values),
            0,
            len(values),
        )
        assert a["prompt_tokens"]["median"] == statistics.median(values)
        # numpy's linear percentile is Python's "inclusive" quantile method.
        deciles = statistics.quantiles(values, n=10, method="inclusive")
        assert a["prompt_tokens"]["p10"] == pytest.approx(deciles[0])
        assert a["prompt_tokens"]["p90"] == pytest.approx(deciles[-1])
        assert a["first_token_ms"] == {"n": 0, "median": None, "p10": None, "p90": None}
    text = _markdown(s)
    assert "## Model requests" in text
    assert "not streamed" in text
    assert "110 (86–246; n=4)" in text  # remote-http's prompt tokens: median (p10–p90; n)
