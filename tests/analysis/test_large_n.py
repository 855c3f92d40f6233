"""Runs with thousands of pairs: no overflow, and the fast paths agree with references."""

from __future__ import annotations

import pytest
from scipy.stats import binom, binomtest

from pairbench.analysis import mcnemar_exact, paired_median_difference
from pairbench.analysis._median import order_statistic_rank


@pytest.mark.parametrize("n", [999, 1001, 1031, 2000, 50_000])
def test_order_statistic_rank_beyond_float_range(n: int) -> None:
    rank = order_statistic_rank(n, 0.95)
    assert rank is not None
    r, coverage = rank
    # Independent: the largest r whose two-sided tail 2 * P(B <= r - 1) stays <= 0.05.
    assert 2 * binom.cdf(r - 1, n, 0.5) <= 0.05 < 2 * binom.cdf(r, n, 0.5)
    assert coverage == pytest.approx(1 - 2 * binom.cdf(r - 1, n, 0.5), abs=1e-12)


@pytest.mark.parametrize(("a", "b"), [(400, 700), (900, 1100), (20_000, 20_500), (56_000, 56_100)])
def test_mcnemar_on_many_discordant_pairs_matches_binomtest(a: int, b: int) -> None:
    assert mcnemar_exact(a, b) == pytest.approx(binomtest(min(a, b), a + b, 0.5).pvalue, rel=1e-9)


def test_a_paired_median_over_five_thousand_pairs_has_an_interval() -> None:
    a = [float(i % 97) for i in range(5000)]
    b = [float((i * 7) % 89) for i in range(5000)]
    result = paired_median_difference(a, b)
    assert result.low is not None and result.high is not None and result.estimate is not None
    assert result.low <= result.estimate <= result.high
