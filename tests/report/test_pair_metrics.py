"""Per-pair metrics: medians, paired differences, censoring, the conditional subset."""

import html
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy.stats import binom

from helpers.report_builders import make_planted, make_planted_run, metrics_of, value_of, wall_ms
from pairbench.report.render._html import render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.store._records import Metric, TrialResult

METRIC_KEYS = {
    "label", "unit", "pairs", "n_used", "n_missing", "n_estimated", "median_a", "median_b",
    "median_paired_difference",
}  # fmt: skip


def _by_key(results: list[TrialResult], arm: str) -> dict[tuple[str, int], TrialResult]:
    return {(r.task, r.trial): r for r in results if r.arm == arm}


def _order_statistic_ci(diffs: list[float]) -> list[float]:
    """Largest r with P(Binomial(n, 1/2) <= r - 1) <= 2.5%: the interval [d(r), d(n+1-r)]."""
    n, d = len(diffs), sorted(diffs)
    r = max(r for r in range(1, n // 2 + 1) if 2 * binom.cdf(r - 1, n, 0.5) <= 0.05)
    return [d[r - 1], d[n - r]]


def _pair(summary: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    return next(p for p in summary["pairs"] if (p["a"], p["b"]) == (a, b))


def test_metrics_match_independent_medians_and_order_statistics() -> None:
    results = make_planted()
    s = build_summary(make_planted_run(), results, [])
    p = _pair(s, "control", "treatment")
    assert list(p["metrics"]) == [
        "wall_ms", "tool_client_ms", "agent_ms", "turns", "input_tokens",
        "uncached_input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
        "output_tokens", "total_tokens", "cost_usd",
    ]  # fmt: skip
    a, b = _by_key(results, "control"), _by_key(results, "treatment")
    keys = sorted(a)
    getters: dict[str, Callable[[TrialResult], float]] = {
        "wall_ms": wall_ms,
        "agent_ms": lambda r: value_of(metrics_of(r).agent_ms),
        "input_tokens": lambda r: value_of(metrics_of(r).input_tokens),
        "tool_client_ms": lambda r: float(
            np.median([c.client_ms for c in metrics_of(r).tool_calls])
        ),
    }
    for name, get in getters.items():
        m = p["metrics"][name]
        assert set(m) == METRIC_KEYS
        xa, xb = [get(a[k]) for k in keys], [get(b[k]) for k in keys]
        diffs = [x - y for x, y in zip(xa, xb, strict=True)]
        assert m["n_used"] == m["pairs"] == 30
        assert m["median_a"]["estimate"] == pytest.approx(np.median(xa))
        assert m["median_b"]["estimate"] == pytest.approx(np.median(xb))
        d = m["median_paired_difference"]
        assert d["estimate"] == pytest.approx(np.median(diffs))
        assert d["ci95"] == pytest.approx(_order_statistic_ci(diffs))
        assert d["censored"] is False
    cost = p["metrics"]["cost_usd"]
    assert cost["n_missing"] == 30 and cost["median_a"]["estimate"] is None  # never 0
    assert cost["median_paired_difference"]["estimate"] is None
    assert (
        "Not measured in any pair: Uncached input tokens, Cache-creation input tokens, "
        "Cache-read input tokens, Total tokens, Cost." in render_markdown(s)
    )


def test_estimated_values_are_kept_apart() -> None:
    results = make_planted()
    est = Metric(value=10.0, provenance="estimated", estimator="chars/4 v1")
    first = results[0]
    assert first.metrics is not None
    patched = first.model_copy(
        update={"metrics": first.metrics.model_copy(update={"input_tokens": est})}
    )
    results[0] = patched
    s = build_summary(make_planted_run(), results, [])
    m = _pair(s, patched.arm, "treatment")["metrics"]["input_tokens"]
    assert (m["n_estimated"], m["n_used"], m["n_missing"]) == (1, 29, 0)
    assert "1 only estimated, kept apart" in render_markdown(s)


def test_censoring_reaching_the_median_reads_greater_than_limit() -> None:
    results = make_planted(timeout_arm="control")
    s = build_summary(make_planted_run(), results, [])
    p = _pair(s, "control", "treatment")
    a, b = _by_key(results, "control"), _by_key(results, "treatment")
    timed_out = sum(r.outcome == "timeout" for r in a.values())
    assert timed_out > 15  # more than half of 30: censoring reaches the median
    for name in ("wall_ms", "agent_ms"):
        m = p["metrics"][name]
        assert m["median_a"] == {
            "estimate": None, "censored": True, "relation": ">", "bound": 60000.0,
            "n": 30, "n_censored": timed_out,
        }  # fmt: skip
        assert m["median_b"]["censored"] is False
    d = p["metrics"]["wall_ms"]["median_paired_difference"]
    # A censored only: those differences are lower bounds. The least the median can be is
    # the median with each at its recorded value; more than half are censored upward, so
    # the most is unbounded.
    recorded = [
        (60000.0 if a[k].outcome == "timeout" else wall_ms(a[k])) - wall_ms(b[k]) for k in sorted(a)
    ]
    c = d["censored"]
    assert (c["pairs"], c["a_only"], c["b_only"], c["both"]) == (timed_out, timed_out, 0, 0)
    assert c["median_low"] == pytest.approx(np.median(recorded)) and c["median_high"] is None
    assert c["direction"] == "at least"
    # The interval's lower end with each censored difference as low as it can be (its
    # recorded value); its upper end could be anything, so it is unbounded.
    assert d["ci95"][0] == pytest.approx(_order_statistic_ci(recorded)[0])
    assert d["ci95"][1] is None
    md, page = render_markdown(s), render_html(s)
    assert "> 60000 ms" in md and "&gt; 60000 ms" not in md
    assert "&gt; 60000 ms" in page and "> 60000 ms" in html.unescape(page)
    assert "true median at least" in md


def test_censoring_not_reaching_the_median_keeps_the_number() -> None:
    results = make_planted(timeout_arm="treatment")
    s = build_summary(make_planted_run(), results, [])
    m = _pair(s, "control", "treatment")["metrics"]["wall_ms"]
    b = _by_key(results, "treatment")
    assert 0 < m["median_b"]["n_censored"] < 15
    walls = [np.inf if r.outcome == "timeout" else wall_ms(r) for r in b.values()]
    assert m["median_b"]["estimate"] == pytest.approx(np.median(walls))
    assert m["median_b"]["censored"] is False


def test_conditional_subset_is_labelled_and_computed_on_both_passed() -> None:
    results = make_planted()
    s = build_summary(make_planted_run(), results, [])
    p = _pair(s, "control", "treatment")
    a, b = _by_key(results, "control"), _by_key(results, "treatment")
    keys = sorted(k for k in a if a[k].outcome == b[k].outcome == "passed")
    cond = p["conditional"]
    assert cond["conditional"] == "pairs both arms passed"
    assert cond["pairs"] == len(keys) == p["both"]
    m = cond["metrics"]["wall_ms"]
    walls_a = [wall_ms(a[k]) for k in keys]
    assert m["pairs"] == len(keys)
    assert m["median_a"]["estimate"] == pytest.approx(np.median(walls_a))
    for text in (render_markdown(s), render_html(s)):
        assert "(conditional: pairs both arms passed)" in text
