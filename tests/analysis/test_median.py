import doctest
import statistics
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binom

import pairbench.analysis._mcnemar
import pairbench.analysis._median
import pairbench.analysis._paired
import pairbench.analysis._wilson
from pairbench.analysis import median, order_statistic_rank, paired_median_difference


def reference_rank(n: int, confidence: float) -> int:
    """Largest r with 2 * P(B <= r - 1) <= 1 - confidence, B ~ Binomial(n, 1/2); 0 if none."""
    alpha = 1 - confidence
    r = 0
    for cand in range(1, n // 2 + 1):
        if 2 * binom.cdf(cand - 1, n, 0.5) <= alpha:
            r = cand
    return r


@pytest.mark.parametrize("n", [1, 2, 5, 6, 7, 10, 17, 30, 81, 200])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_rank_matches_scipy_binom(n: int, confidence: float) -> None:
    expected = reference_rank(n, confidence)
    got = order_statistic_rank(n, confidence)
    if expected == 0:
        assert got is None
    else:
        assert got is not None
        r, coverage = got
        assert r == expected
        assert coverage == pytest.approx(1 - 2 * binom.cdf(r - 1, n, 0.5), rel=1e-12)
        assert coverage >= confidence


def test_interval_uses_reference_order_statistics() -> None:
    a = [120.0, 95, 130, 101, 99, 150, 142, 88, 110, 105, 97, 133, 125, 118, 90]
    b = [100.0, 99, 111, 100, 93, 120, 140, 90, 100, 101, 99, 120, 110, 100, 92]
    d = sorted(x - y for x, y in zip(a, b, strict=True))
    r = reference_rank(len(d), 0.95)
    res = paired_median_difference(a, b)
    assert res.estimate == statistics.median(d)
    assert (res.low, res.high) == (d[r - 1], d[len(d) - r])
    assert res.n_used == res.n_pairs == 15
    assert res.coverage == pytest.approx(1 - 2 * binom.cdf(r - 1, len(d), 0.5))
    assert "order statistics" in res.method


def test_too_few_pairs_gives_no_interval_and_says_why() -> None:
    res = paired_median_difference([3.0, 4, 5], [1.0, 1, 1])
    assert res.estimate == 3.0
    assert res.low is None and res.high is None and res.coverage is None
    assert "too few" in res.method


def test_censored_pairs_are_excluded_and_counted() -> None:
    a = [10.0, 20, 30, 40, 50, 60, 70, 80]
    b = [1.0, 2, 3, 4, 5, 6, 7, 8]
    ca = [False] * 7 + [True]
    cb = [True] + [False] * 7
    res = paired_median_difference(a, b, censored_a=ca, censored_b=cb)
    used = sorted(x - y for x, y in zip(a[1:7], b[1:7], strict=True))
    assert res.n_censored == 2 and res.n_used == 6 and res.n_pairs == 8
    assert res.estimate == statistics.median(used)
    assert (res.low, res.high) == (used[0], used[-1])  # n=6 at 95%: r = 1
    assert "2 of 8 pairs censored" in res.censoring
    assert "excluded" in res.censoring


def test_all_censored_gives_no_estimate() -> None:
    res = paired_median_difference([1.0], [2.0], censored_a=[True])
    assert res.estimate is None and res.n_used == 0 and res.n_censored == 1


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match="one per trial"):
        paired_median_difference([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        paired_median_difference([float("nan")], [1.0])
    with pytest.raises(ValueError, match="one flag per pair"):
        paired_median_difference([1.0], [1.0], censored_a=[True, False])


def test_median_helper() -> None:
    assert median([5, 1, 3]) == 3
    assert median([1, 2, 3, 10]) == 2.5
    with pytest.raises(ValueError, match="empty"):
        median([])


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(st.lists(finite, min_size=1, max_size=60))
def test_median_is_statistics_median(values: list[float]) -> None:
    # The partial sort must pick the same middle values a full sort does, ties included.
    assert median(values) == statistics.median(values)
    if len(values) > 1:
        d = paired_median_difference(values, [0.0] * len(values))
        assert d.estimate == statistics.median(values)


@given(st.lists(st.tuples(finite, finite, st.booleans(), st.booleans()), max_size=40))
def test_swapping_arms_negates(rows: list[tuple[float, float, bool, bool]]) -> None:
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    ca, cb = [r[2] for r in rows], [r[3] for r in rows]
    ab = paired_median_difference(a, b, censored_a=ca, censored_b=cb)
    ba = paired_median_difference(b, a, censored_a=cb, censored_b=ca)
    assert (ab.n_used, ab.n_censored) == (ba.n_used, ba.n_censored)
    if ab.estimate is None:
        assert ba.estimate is None
    else:
        assert ba.estimate == pytest.approx(-ab.estimate)
    if ab.low is None:
        assert ba.low is None and ba.high is None
    else:
        assert ab.high is not None and ba.low is not None and ba.high is not None
        assert ba.low == pytest.approx(-ab.high)
        assert ba.high == pytest.approx(-ab.low)
        assert ab.estimate is not None and ab.low <= ab.estimate <= ab.high


@pytest.mark.parametrize(
    "module",
    [
        pairbench.analysis._wilson,
        pairbench.analysis._mcnemar,
        pairbench.analysis._paired,
        pairbench.analysis._median,
    ],
)
def test_docstring_examples_hold(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0
