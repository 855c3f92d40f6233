"""The analyses of declared hypotheses, pinned against scipy and statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

from pairbench.analysis import (
    PairedCounts,
    paired_equivalence,
    paired_mean_difference,
    paired_proportion_difference,
    paired_rate_equivalence,
)

SAMPLES = [
    # (a, b): seeded lognormal token counts with a shared per-pair draw, and small cases.
    (
        np.round(2300 * np.exp(0.2 * z + 0.05 * e1)),
        np.round(2200 * np.exp(0.2 * z + 0.05 * e2)),
    )
    for z, e1, e2 in [
        np.random.default_rng(seed).standard_normal((3, n))
        for seed, n in ((1, 40), (2, 200), (3, 7))
    ]
] + [
    (np.array([10.0, 12, 9, 14]), np.array([9.0, 10, 9, 11])),
    (np.array([1.0, 2.0]), np.array([0.5, 3.0])),
]


@pytest.mark.parametrize(("a", "b"), SAMPLES)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_paired_mean_difference_matches_scipy(
    a: np.ndarray, b: np.ndarray, confidence: float
) -> None:
    r = paired_mean_difference(a, b, confidence)
    d = a - b
    n = len(d)
    se = np.std(d, ddof=1) / math.sqrt(n)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * se
    assert r.n == n and r.df == n - 1
    assert r.difference == pytest.approx(d.mean(), rel=1e-12)
    assert r.mean_a - r.mean_b == pytest.approx(r.difference, rel=1e-9, abs=1e-9)
    assert r.se == pytest.approx(se, rel=1e-12)
    assert (r.low, r.high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-12)
    assert r.p_value == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-10)
    assert r.p_value == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-10)
    low, high = stats.ttest_1samp(d, 0.0).confidence_interval(confidence)
    assert (r.low, r.high) == pytest.approx((low, high), rel=1e-10)


@pytest.mark.parametrize(("a", "b"), SAMPLES)
@pytest.mark.parametrize("margin", [0.5, 46.0, 150.0, 1000.0])
def test_paired_equivalence_matches_statsmodels_ttost_paired(
    a: np.ndarray, b: np.ndarray, margin: float
) -> None:
    r = paired_equivalence(a, b, margin)
    p, (_, p_lower, _), (_, p_upper, _) = ttost_paired(a, b, -margin, margin)
    assert r.tost_p == pytest.approx(p, rel=1e-10, abs=1e-300)
    assert r.p_lower == pytest.approx(p_lower, rel=1e-10, abs=1e-300)
    assert r.p_upper == pytest.approx(p_upper, rel=1e-10, abs=1e-300)
    # One-sided scipy tests give the same two p values.
    d = a - b
    assert r.p_lower == pytest.approx(
        stats.ttest_1samp(d, -margin, alternative="greater").pvalue, rel=1e-10, abs=1e-300
    )
    assert r.p_upper == pytest.approx(
        stats.ttest_1samp(d, margin, alternative="less").pvalue, rel=1e-10, abs=1e-300
    )
    # The verdict is the 95% interval's; for the paired t it is TOST at 2.5% per side.
    assert r.equivalent == (-margin < r.difference.low and r.difference.high < margin)
    assert r.equivalent == (r.tost_p < 0.025)


def test_a_five_percent_effect_is_not_equivalent_at_two_percent() -> None:
    z = np.random.default_rng(7).standard_normal((2, 300))
    b = 2300 * np.exp(0.05 * z[0])
    a = 1.05 * 2300 * np.exp(0.05 * z[1])
    r = paired_equivalence(a, b, 0.02 * b.mean())
    assert not r.equivalent and r.difference.low > 0.02 * b.mean()
    assert r.tost_p > 0.5


def test_no_spread_gives_a_point_interval_and_decided_p_values() -> None:
    same = paired_equivalence([5.0, 6.0, 7.0], [5.0, 6.0, 7.0], 1.0)
    assert (same.difference.low, same.difference.high, same.difference.p_value) == (0.0, 0.0, 1.0)
    assert (same.p_lower, same.p_upper, same.equivalent) == (0.0, 0.0, True)
    shifted = paired_equivalence([7.0, 8.0, 9.0], [5.0, 6.0, 7.0], 1.0)
    assert (shifted.difference.low, shifted.difference.p_value) == (2.0, 0.0)
    assert (shifted.p_lower, shifted.p_upper, shifted.equivalent) == (0.0, 1.0, False)


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        ([1.0], [2.0], "at least 2 pairs"),
        ([1.0, 2.0], [1.0], "one value per pair"),
        ([1.0, float("nan")], [1.0, 2.0], "finite"),
    ],
)
def test_unusable_pairs_are_refused(a: list[float], b: list[float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        paired_mean_difference(a, b)


def test_bad_margins_and_confidences_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        paired_equivalence([1.0, 2.0], [1.0, 3.0], 0.0)
    with pytest.raises(ValueError, match="confidence"):
        paired_mean_difference([1.0, 2.0], [1.0, 3.0], 1.0)
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        paired_rate_equivalence(PairedCounts(1, 1, 1, 1), 1.5)
    with pytest.raises(ValueError, match="at least one pair"):
        paired_rate_equivalence(PairedCounts(0, 0, 0, 0), 0.1)


@pytest.mark.parametrize(
    "counts", [(0, 1, 1, 8), (3, 9, 2, 40), (5, 0, 0, 95), (40, 6, 7, 347), (0, 12, 0, 3)]
)
def test_rate_equivalence_matches_scipy_binomtest_and_newcombe(
    counts: tuple[int, int, int, int],
) -> None:
    r = paired_rate_equivalence(PairedCounts(*counts), 0.10)
    _, a_only, b_only, _ = counts
    discordant = a_only + b_only
    expected_p = stats.binomtest(a_only, discordant, 0.5).pvalue if discordant else 1.0
    assert r.mcnemar_p == pytest.approx(expected_p, rel=1e-12)
    newcombe = paired_proportion_difference(*counts)
    assert (r.difference, r.low, r.high) == (newcombe.difference, newcombe.low, newcombe.high)
    assert r.difference == pytest.approx((a_only - b_only) / sum(counts))
    assert r.equivalent == (r.low > -0.10 and r.high < 0.10)


def test_a_non_significant_mcnemar_is_not_equivalence() -> None:
    # Ten pairs, one discordant each way: McNemar p = 1.0, and the interval is ±32 pp.
    r = paired_rate_equivalence(PairedCounts(0, 1, 1, 8), 0.10)
    assert r.mcnemar_p == 1.0
    assert r.low < -0.3 and r.high > 0.3
    assert not r.equivalent


def test_many_concordant_pairs_are_equivalent() -> None:
    r = paired_rate_equivalence(PairedCounts(40, 6, 7, 347), 0.10)
    assert r.equivalent and -0.10 < r.low < r.high < 0.10


values = st.lists(
    st.tuples(
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
    ),
    min_size=2,
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(values, st.floats(min_value=1e-3, max_value=1e6))
def test_swapping_arms_negates_the_difference_and_keeps_the_verdict(
    pairs: list[tuple[float, float]], margin: float
) -> None:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ab, ba = paired_equivalence(a, b, margin), paired_equivalence(b, a, margin)
    assert ba.difference.difference == pytest.approx(-ab.difference.difference, abs=1e-6)
    assert ba.difference.low == pytest.approx(-ab.difference.high, abs=1e-6)
    assert ba.difference.p_value == pytest.approx(ab.difference.p_value, abs=1e-9)
    assert ba.tost_p == pytest.approx(ab.tost_p, abs=1e-9)
    for p in (ab.difference.p_value, ab.tost_p, ab.p_lower, ab.p_upper):
        assert 0.0 <= p <= 1.0
    assert ab.difference.low <= ab.difference.difference <= ab.difference.high


counts = st.integers(min_value=0, max_value=200)


@settings(max_examples=200, deadline=None)
@given(counts, counts, counts, counts, st.floats(min_value=0.01, max_value=0.99))
def test_rate_swap_negates_and_p_stays_in_range(
    both: int, a_only: int, b_only: int, neither: int, margin: float
) -> None:
    if both + a_only + b_only + neither == 0:
        return
    ab = paired_rate_equivalence(PairedCounts(both, a_only, b_only, neither), margin)
    ba = paired_rate_equivalence(PairedCounts(both, b_only, a_only, neither), margin)
    assert (ba.difference, ba.low, ba.high) == (-ab.difference, -ab.high, -ab.low)
    assert ba.equivalent == ab.equivalent and ba.mcnemar_p == ab.mcnemar_p
    assert 0.0 <= ab.mcnemar_p <= 1.0
