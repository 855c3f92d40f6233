"""Exact McNemar test: a binomial test on the discordant pairs, and its mid-p version."""

from __future__ import annotations

import math

from pairbench.analysis._binomial import binom_cdf, binom_pmf


def _discordant(a_only: int, b_only: int) -> tuple[int, int]:
    """(n, k): the discordant pairs and the smaller count, once the counts are checked."""
    for name, value in (("a_only", a_only), ("b_only", b_only)):
        if isinstance(value, bool) or value != int(value) or value < 0:
            raise ValueError(f"{name} must be a non-negative whole number, got {value!r}")
    a, b = int(a_only), int(b_only)
    return a + b, min(a, b)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p value for paired binary outcomes.

    Under the null each discordant pair is equally likely to favour either arm, so the
    smaller discordant count is Binomial(a_only + b_only, 1/2); the two-sided p value is
    ``min(1, 2 * P(X <= min(a_only, b_only)))``. With no discordant pairs there is no
    evidence either way and the p value is 1.0.

    Example::

        >>> round(mcnemar_exact(1, 9), 6)
        0.021484
        >>> mcnemar_exact(0, 0)
        1.0

    Raises:
        ValueError: a negative or non-integer count.
    """
    n, k = _discordant(a_only, b_only)
    if n == 0:
        return 1.0
    if n > _EXACT_LIMIT:
        # Summing big integers costs ~n^2.7 past here; scipy's binomial CDF (regularized
        # incomplete beta) is accurate to double precision.
        return min(1.0, 2.0 * binom_cdf(k, n, 0.5))
    # Exact integer arithmetic: the tail is a ratio of integers, and Python's int / int
    # rounds correctly even when 2**n is far beyond float range.
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)
    return min(1.0, 2.0 * tail)


def mcnemar_midp(a_only: int, b_only: int) -> float:
    """Two-sided mid-p McNemar value: ``2 * (P(X <= k) - P(X = k) / 2)`` with ``X`` ~
    Binomial(n, 1/2), ``k`` the smaller discordant count (capped at 1; 1.0 with no
    discordant pairs).

    The exact test is conservative: at alpha 0.05 its type-I error rate is about 0.036; the
    mid-p's is close to the nominal level (Fagerland, Lydersen and Laake 2013, BMC Medical
    Research Methodology 13:91), which is why reports show it beside the exact p.

    Example::

        >>> round(mcnemar_midp(1, 9), 6)
        0.011719
        >>> mcnemar_midp(3, 3), mcnemar_midp(0, 0)
        (1.0, 1.0)

    Raises:
        ValueError: a negative or non-integer count.
    """
    n, k = _discordant(a_only, b_only)
    if n == 0 or 2 * k == n:
        return 1.0  # no evidence, or the observed split is the centre: nothing more extreme
    exact = mcnemar_exact(a_only, b_only)
    point = binom_pmf(k, n, 0.5) if n > _EXACT_LIMIT else math.comb(n, k) / (1 << n)
    return min(1.0, max(0.0, exact - point))


_EXACT_LIMIT = 1000
