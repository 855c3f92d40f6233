"""Medians and the median of paired differences with a distribution-free interval."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from pairbench.analysis._binomial import binom_cdf, binom_ppf
from pairbench.analysis._wilson import _check_confidence

ORDER_STATISTIC_METHOD = (
    "median of paired differences (a - b); interval [d(r), d(n+1-r)] from order statistics "
    "of the sorted differences, with r chosen from Binomial(n, 1/2) (sign-test inversion) "
    "so that exact coverage is at least the requested confidence"
)


class MedianDifference(NamedTuple):
    """The median of paired differences ``a - b`` with a distribution-free interval."""

    n_pairs: int
    """Pairs given."""
    n_censored: int
    """Pairs in which either arm was censored (timed out); excluded from estimate and interval."""
    n_used: int
    """Pairs the estimate and interval are computed over."""
    estimate: float | None
    """Median of the differences over the used pairs; None when no pair is usable."""
    low: float | None
    """Lower bound; None when ``n_used`` is too small for the requested confidence."""
    high: float | None
    confidence: float
    """The requested confidence."""
    coverage: float | None
    """The interval's exact coverage (at least ``confidence``: order statistics are discrete)."""
    method: str
    """How the estimate and interval were computed, or why the interval is absent."""
    censoring: str
    """What censoring did to the result, in words."""


def _finite(
    values: Sequence[float] | npt.NDArray[np.float64], name: str
) -> npt.NDArray[np.float64]:
    # One float64 array: the same IEEE arithmetic as Python floats, at numpy's speed for
    # the million-trial runs the report reads from the trial table.
    out = np.array(values, dtype=np.float64).ravel()
    if not np.isfinite(out).all():
        raise ValueError(f"{name} contains NaN or infinity; drop missing values before calling")
    return out


def median(values: Sequence[float] | npt.NDArray[np.float64]) -> float:
    """The sample median (the mean of the two middle values when the count is even).

    Example::

        >>> median([3.0, 1.0, 2.0])
        2.0
        >>> median([4, 1, 3, 2])
        2.5

    Raises:
        ValueError: ``values`` is empty (a median of nothing is undefined, not 0) or
            holds NaN or infinity.
    """
    xs = _finite(values, "values")
    if not len(xs):
        raise ValueError("median of an empty sequence is undefined (report it as n/a)")
    mid = len(xs) // 2
    # A partial sort puts the middle values in place in linear time: the same elements a
    # full sort would give, so the same median, without a million-value sort per metric.
    if len(xs) % 2:
        return float(np.partition(xs, mid)[mid])
    lo, hi = np.partition(xs, (mid - 1, mid))[mid - 1 : mid + 1]
    return float((lo + hi) / 2.0)


def _sorted_median(xs: npt.NDArray[np.float64]) -> float:
    """:func:`median` of values already sorted (the paired differences are, for their
    interval), with the same arithmetic."""
    mid = len(xs) // 2
    if len(xs) % 2:
        return float(xs[mid])
    return float((xs[mid - 1] + xs[mid]) / 2.0)


def order_statistic_rank(n: int, confidence: float) -> tuple[int, float] | None:
    """The rank ``r`` (1-based) and exact coverage of the interval ``[d(r), d(n+1-r)]``.

    ``r`` is the largest rank whose interval covers the median with probability at least
    ``confidence``; None when even ``[d(1), d(n)]`` falls short (n too small).

    Example::

        >>> order_statistic_rank(10, 0.95)
        (2, 0.978515625)
        >>> order_statistic_rank(5, 0.95) is None
        True
    """
    _check_confidence(confidence)
    alpha = 1.0 - confidence
    if n > _EXACT_LIMIT:
        return _order_statistic_rank_large(n, alpha)
    total = 1 << n
    best: tuple[int, float] | None = None
    cdf_count = 0  # sum of comb(n, i) for i < r, in integers
    for r in range(1, n // 2 + 1):
        cdf_count += math.comb(n, r - 1)
        # coverage = P(r <= B <= n - r) = 1 - 2 * P(B <= r - 1). int / int is correctly
        # rounded, so this stays exact enough for any n a run can produce.
        if 2 * cdf_count / total > alpha:
            break
        # int / int, never float * int: 2.0 * cdf_count overflows past n ~ 1030.
        best = (r, 1.0 - (2 * cdf_count) / total)
    return best


_EXACT_LIMIT = 1000
"""Above this many pairs the integer sums cost O(n^2) big-int work; use the binomial CDF."""


def _order_statistic_rank_large(n: int, alpha: float) -> tuple[int, float] | None:
    # scipy's binomial CDF (regularized incomplete beta) is accurate far beyond float range
    # of 2**n.
    # The largest r with 2 * P(B <= r - 1) <= alpha: start from the quantile and step.
    r = max(1, binom_ppf(alpha / 2, n, 0.5))
    while r > 1 and 2 * binom_cdf(r - 1, n, 0.5) > alpha:
        r -= 1
    while r + 1 <= n // 2 and 2 * binom_cdf(r, n, 0.5) <= alpha:
        r += 1
    tail = 2 * binom_cdf(r - 1, n, 0.5)
    if tail > alpha:
        return None
    return (r, 1.0 - tail)


def paired_median_difference(
    a: Sequence[float] | npt.NDArray[np.float64],
    b: Sequence[float] | npt.NDArray[np.float64],
    confidence: float = 0.95,
    *,
    censored_a: Sequence[bool] | None = None,
    censored_b: Sequence[bool] | None = None,
) -> MedianDifference:
    """Median of the paired differences ``a[i] - b[i]`` with an order-statistic interval.

    The interval needs no distributional assumption: the count of differences below the
    true median is Binomial(n, 1/2), so ``[d(r), d(n+1-r)]`` covers it with a known
    probability. Censored pairs (a timeout in either arm, so the true value is only a
    lower bound) are left out of both the estimate and the interval, and the result says
    so; this first cut does not model censoring.

    Example::

        >>> r = paired_median_difference([10, 12, 9, 14, 11, 13], [8, 9, 9, 10, 10, 9])
        >>> (r.estimate, r.low, r.high, r.n_used)
        (2.5, 0.0, 4.0, 6)

    Raises:
        ValueError: sequences of different lengths, or NaN/infinite values.
    """
    _check_confidence(confidence)
    xs, ys = _finite(a, "a"), _finite(b, "b")
    if len(xs) != len(ys):
        raise ValueError(f"paired values need one per trial in each arm: {len(xs)} vs {len(ys)}")
    none = np.zeros(len(xs), dtype=np.bool_)
    ca = none if censored_a is None else np.array(censored_a, dtype=np.bool_).ravel()
    cb = none if censored_b is None else np.array(censored_b, dtype=np.bool_).ravel()
    if len(ca) != len(xs) or len(cb) != len(xs):
        raise ValueError("censored_a and censored_b need one flag per pair")
    keep = ~(ca | cb)
    diffs = np.sort(xs[keep] - ys[keep])
    n_censored = len(xs) - len(diffs)
    if n_censored:
        censoring = (
            f"{n_censored} of {len(xs)} pairs censored (timeout in either arm) and excluded "
            "from estimate and interval; the result is conditional on neither arm timing out "
            "and likely understates the slower arm"
        )
    else:
        censoring = "no censored pairs"
    n = len(diffs)
    if n == 0:
        return MedianDifference(
            len(xs),
            n_censored,
            0,
            None,
            None,
            None,
            confidence,
            None,
            "no usable pairs: no estimate",
            censoring,
        )
    estimate = _sorted_median(diffs)
    rank = order_statistic_rank(n, confidence)
    if rank is None:
        method = (
            f"median of paired differences (a - b); no interval: {n} pairs are too few for "
            f"{confidence:.0%} coverage from order statistics (even [min, max] covers "
            f"only {1.0 - 2.0 / (1 << n):.1%})"
        )
        return MedianDifference(
            len(xs), n_censored, n, estimate, None, None, confidence, None, method, censoring
        )
    r, coverage = rank
    return MedianDifference(
        len(xs),
        n_censored,
        n,
        estimate,
        float(diffs[r - 1]),
        float(diffs[n - r]),
        confidence,
        coverage,
        ORDER_STATISTIC_METHOD,
        censoring,
    )
