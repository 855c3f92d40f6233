"""The share of discordant pairs arm A won: McNemar's one-sided p values and the intervals
that invert the exact and mid-p tests.

Among ``n = a_only + b_only`` discordant pairs, ``a_only ~ Binomial(n, pi)``; McNemar's
null is ``pi = 1/2``. An interval for ``pi`` built from the same binomial tails as the test
(Clopper-Pearson for the exact test, its mid-p analogue for the mid-p test) excludes 1/2
exactly when the two-sided test (twice the smaller tail) rejects at ``1 - confidence``, so
a report can put test and interval side by side without the two disagreeing.
"""

from __future__ import annotations

from typing import Literal

from pairbench.analysis._binomial import binom_pmf, binom_sf
from pairbench.analysis._mcnemar import _discordant, mcnemar_exact, mcnemar_midp

Alternative = Literal["two-sided", "greater", "less"]


def mcnemar_p(a_only: int, b_only: int, alternative: Alternative = "two-sided", *,
              mid_p: bool = False) -> float:  # fmt: skip
    """McNemar's p value, two-sided or one-sided (``greater``: A wins more often than B).

    One-sided: ``P(X >= a_only)`` (``greater``) or ``P(X <= a_only)`` (``less``) with ``X``
    ~ Binomial(n, 1/2); the mid-p version counts the observed value by half.

    Example::

        >>> round(mcnemar_p(9, 1, "greater"), 6), round(mcnemar_p(9, 1, "less"), 6)
        (0.010742, 0.999023)
        >>> round(mcnemar_p(9, 1, "greater", mid_p=True), 6)
        0.005859

    Raises:
        ValueError: a negative or non-integer count.
    """
    n, _ = _discordant(a_only, b_only)
    if alternative == "two-sided":
        return mcnemar_midp(a_only, b_only) if mid_p else mcnemar_exact(a_only, b_only)
    if n == 0:
        return 1.0
    k = int(a_only) if alternative == "greater" else int(b_only)
    # P(A's count >= a) under 1/2 is P(B's count <= b): one tail for both directions.
    at_least = binom_sf(k - 1, n, 0.5)
    if mid_p:
        at_least -= 0.5 * binom_pmf(k, n, 0.5)
    return min(1.0, max(0.0, at_least))


def discordant_share_interval(
    a_only: int, b_only: int, confidence: float = 0.95, *, mid_p: bool = False
) -> tuple[float, float]:
    """The central interval for the share of discordant pairs A won, from the binomial
    tails: Clopper-Pearson (``mid_p=False``, agreeing with the exact McNemar test) or the
    mid-p interval (agreeing with the mid-p test). With no discordant pairs: (0, 1).

    Example::

        >>> lo, hi = discordant_share_interval(9, 1)
        >>> (round(lo, 4), round(hi, 4))
        (0.555, 0.9975)
        >>> lo, hi = discordant_share_interval(9, 1, mid_p=True)
        >>> (round(lo, 4), round(hi, 4))
        (0.5965, 0.995)

    Raises:
        ValueError: a negative or non-integer count, or ``confidence`` outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    n, _ = _discordant(a_only, b_only)
    k = int(a_only)
    if n == 0:
        return 0.0, 1.0
    from scipy.optimize import brentq
    from scipy.stats import binom, binomtest

    if not mid_p:
        ci = binomtest(k, n, 0.5).proportion_ci(confidence, method="exact")
        return float(ci.low), float(ci.high)
    half = (1.0 - confidence) / 2.0

    def upper_tail(p: float) -> float:  # P(X > k) + P(X = k) / 2, rising in p
        return float(binom.sf(k, n, p) + 0.5 * binom.pmf(k, n, p)) - half

    def lower_tail(p: float) -> float:  # P(X < k) + P(X = k) / 2, falling in p
        return float(binom.cdf(k - 1, n, p) + 0.5 * binom.pmf(k, n, p)) - half

    low = 0.0 if k == 0 else float(brentq(upper_tail, 0.0, 1.0, xtol=1e-14))
    high = 1.0 if k == n else float(brentq(lower_tail, 0.0, 1.0, xtol=1e-14))
    return low, high
