"""The interval that inverts the exact sign-flip test, pinned to scipy's permutation test
(an independent implementation) and to a brute-force scan of every candidate shift."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from pairbench.analysis import sign_flip_interval, sign_flip_test


def _scipy_p(d: np.ndarray, delta: float) -> float:
    res = stats.permutation_test(
        (d - delta,),
        np.mean,
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    return float(res.pvalue)


def _brute(d: np.ndarray, alpha: float) -> tuple[float, float]:
    """Every subset mean, every midpoint between them and a point beyond each end: the
    hull of the shifts the test accepts (p > alpha)."""
    n = len(d)
    means = sorted(
        {float(np.mean(d[[i for i in range(n) if mask >> i & 1]])) for mask in range(1, 1 << n)}
    )
    span = (means[-1] - means[0]) or 1.0
    points = [means[0] - span, *means, means[-1] + span]
    points += [(a + b) / 2 for a, b in itertools.pairwise(means)]
    ok = [x for x in points if sign_flip_test(d - x).p_value > alpha]
    low = -np.inf if min(ok) < means[0] else min(ok)
    high = np.inf if max(ok) > means[-1] else max(ok)
    return low, high


@pytest.mark.parametrize("seed", range(12))
def test_the_interval_is_the_hull_of_the_accepted_shifts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 10))
    d = rng.integers(-3, 5, size=n).astype(float)
    if seed % 3 == 0:
        d = rng.normal(0.5, 2.0, size=n).round(3)
    r = sign_flip_interval(d, 0.95)
    low, high = _brute(d, 0.05)
    assert (r.low, r.high) == pytest.approx((low, high), abs=1e-12)
    assert r.low <= r.mean <= r.high


@pytest.mark.parametrize(
    "d",
    [
        [2, -1, 0, 1, 3, 0, 1, 2],
        [3, 1, 2, 2, 0, 1, 4],
        [0.4, 1.3, -0.2, 2.1, 0.9, 1.7, 0.3, 1.1, -0.5],
        [1, 1, 1, 1, 1, 1, 2],
    ],
)
def test_scipy_accepts_the_ends_and_rejects_just_beyond_them(d: list[float]) -> None:
    values = np.asarray(d, dtype=float)
    r = sign_flip_interval(values, 0.95)
    assert np.isfinite(r.low) and np.isfinite(r.high)
    # The ends are shifts the test does not reject ...
    assert _scipy_p(values, r.low) > 0.05 and _scipy_p(values, r.high) > 0.05
    # ... and any shift a little beyond them it rejects.
    eps = 1e-6
    assert _scipy_p(values, r.low - eps) <= 0.05
    assert _scipy_p(values, r.high + eps) <= 0.05


@pytest.mark.parametrize("d", [[1, 2, 0, 3, 1, 1], [2, 2, 1, 3, 2, 2, 1], [-1, 0, 1, 2, 1, 0]])
def test_the_interval_excludes_zero_exactly_when_the_test_rejects(d: list[int]) -> None:
    r = sign_flip_interval(d, 0.95)
    rejects = sign_flip_test(d).p_value <= 0.05
    assert rejects == (not r.low <= 0.0 <= r.high)


def test_too_few_pairs_give_an_unbounded_interval() -> None:
    # 5 pairs: the smallest attainable p is 0.0625, so no shift can be rejected at 5%.
    r = sign_flip_interval([1, 2, 1, 3, 2], 0.95)
    assert (r.low, r.high) == (-np.inf, np.inf)
    # At 90% it can.
    r90 = sign_flip_interval([1, 2, 1, 3, 2], 0.90)
    assert np.isfinite(r90.low) and np.isfinite(r90.high)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="confidence"):
        sign_flip_interval([1, 2, 3], 1.5)
    with pytest.raises(ValueError, match="at least 1"):
        sign_flip_interval([], 0.95)
    with pytest.raises(ValueError, match="stops at"):
        sign_flip_interval(list(range(21)), 0.95)
