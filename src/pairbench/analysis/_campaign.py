"""Campaign-level statistics: the pair of campaigns is the replicate.

In a campaign study every arm runs the same fixed scenarios once per pair, so the
scenarios are not a sample of anything: the independent replicate is the pair, and the
campaign-level difference ``D_i = candidate passes - baseline passes`` in pair ``i`` is
what the primary analysis tests (exact sign flip over all ``2**N`` assignments) and
estimates (mean with a t interval). Per-cell tests live in ``_scenario_grid``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

from pairbench.analysis._hypotheses import paired_mean_difference

MAX_EXACT_PAIRS = 20
"""The largest N ``sign_flip_test`` enumerates (2**20 sums: 8 MB, well under a second)."""


class SignFlipTest(NamedTuple):
    """The exact two-sided sign-flip test of ``mean(D) = 0``."""

    n: int
    """Pairs."""
    mean: float
    """Mean of the differences ``D_i``."""
    p_value: float
    """Share of the ``2**n`` sign assignments whose ``|mean|`` is at least the observed."""
    extreme: int
    """How many sign assignments are at least as extreme as the observed one."""
    assignments: int
    """``2**n``: every sign assignment, each equally likely under the null."""
    smallest_attainable_p: float
    """``2 / 2**n``: no data with ``n`` pairs can give a smaller p value."""


class CampaignInterval(NamedTuple):
    """The mean campaign-level difference with its t interval."""

    n: int
    """Pairs."""
    mean: float
    """Mean of the differences ``D_i``."""
    sd: float
    """Sample standard deviation of ``D`` (``n - 1`` in the denominator)."""
    se: float
    """``sd / sqrt(n)``."""
    df: int
    """``n - 1``."""
    low: float
    high: float
    """``mean ± t(1 - (1 - confidence) / 2, df) * se``; both ``mean`` when ``sd`` is 0."""
    confidence: float


def smallest_attainable_p(n: int) -> float:
    """The smallest two-sided p value the exact sign-flip test can give with ``n`` pairs.

    Only the observed signs and their mirror image are as extreme as "every pair favours
    one arm", so the floor is ``2 / 2**n``: with 5 pairs no result can reach p < 0.05,
    which is why a superiority claim at 5% needs at least 6 pairs. Zero differences make
    the real floor higher (their signs flip freely), never lower.

    Example::

        >>> smallest_attainable_p(5), smallest_attainable_p(6)
        (0.0625, 0.03125)

    Raises:
        ValueError: ``n`` is not a whole number of at least 1.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"the number of pairs must be a whole number >= 1, got {n!r}")
    # 2 / 2**n is exact in binary floating point for any n a study can have.
    return min(1.0, 2.0 / float(1 << int(n)))


def _differences(d: Sequence[float] | Any, minimum: int) -> np.ndarray[Any, Any]:
    values = np.asarray(d, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"D needs one difference per pair (1-D), got shape {values.shape}")
    if len(values) < minimum:
        raise ValueError(
            f"needs at least {minimum} pair(s), got {len(values)}: with fewer there is "
            "nothing to test or estimate (report it as not computed)"
        )
    if not np.isfinite(values).all():
        raise ValueError("differences must be finite: drop pairs that are not complete first")
    return values


def sign_flip_test(
    d: Sequence[float] | Any, alternative: Literal["two-sided", "greater", "less"] = "two-sided"
) -> SignFlipTest:
    """Exact sign-flip (permutation) test of a zero mean campaign difference.

    Under the sharp null the arms are exchangeable within a pair, so each ``D_i`` is as
    likely to have had the opposite sign. The p value is the share of all ``2**n`` sign
    assignments whose ``|sum|`` is at least the observed ``|sum|`` (the sum orders the
    assignments exactly as the mean does); ``greater`` counts sums at least the observed
    one, ``less`` at most. It equals ``scipy.stats.permutation_test`` with
    ``permutation_type="samples"``, ``statistic=np.mean``, ``n_resamples=inf`` and the same
    ``alternative``.

    Example::

        >>> r = sign_flip_test([1, 1, 1, 1, 1, 1])  # every pair favours the candidate
        >>> (r.mean, r.p_value, r.extreme, r.assignments)
        (1.0, 0.03125, 2, 64)
        >>> sign_flip_test([2, -1, 0, 1, 3, 0, 1]).p_value
        0.25
        >>> sign_flip_test([1, 1, 1, 1, 1, 1], "greater").p_value  # one-sided: 1 / 64
        0.015625

    Raises:
        ValueError: no pairs, more than ``MAX_EXACT_PAIRS`` (20) pairs, a non-finite
            value, or a vector that is not 1-D.
    """
    values = _differences(d, minimum=1)
    n = len(values)
    if n > MAX_EXACT_PAIRS:
        raise ValueError(
            f"the exact sign-flip test enumerates 2**N assignments and stops at "
            f"N = {MAX_EXACT_PAIRS} pairs (got {n}); with that many pairs use the t interval "
            "(campaign_t_interval), or declare a seeded Monte Carlo test before the run"
        )
    # Build every signed sum by doubling: after k steps ``sums`` holds the 2**k sums of
    # the first k magnitudes with each sign. 2**20 float64s is 8 MB, where a 2**n x n
    # sign matrix would be 160 MB.
    sums = np.zeros(1)
    for magnitude in np.abs(values):
        sums = np.concatenate((sums + magnitude, sums - magnitude))
    total = float(values.sum())
    observed = abs(total)
    # The enumerated sums add the same numbers in another order, so a tie in exact
    # arithmetic can differ in the last bits; the tolerance (a bound on float summation
    # error) keeps such ties counted, as scipy's own relative tolerance does. Integer
    # differences, the usual case, sum exactly and need none.
    tolerance = 4.0 * n * np.finfo(np.float64).eps * float(np.abs(values).sum())
    if alternative == "greater":
        extreme = int(np.count_nonzero(sums >= total - tolerance))
    elif alternative == "less":
        extreme = int(np.count_nonzero(sums <= total + tolerance))
    else:
        extreme = int(np.count_nonzero(np.abs(sums) >= observed - tolerance))
    assignments = 1 << n
    return SignFlipTest(
        n=n,
        mean=float(values.mean()),
        p_value=min(1.0, extreme / assignments),
        extreme=extreme,
        assignments=assignments,
        smallest_attainable_p=smallest_attainable_p(n) / (1 if alternative == "two-sided" else 2),
    )


def campaign_t_interval(d: Sequence[float] | Any, confidence: float = 0.95) -> CampaignInterval:
    """Mean campaign-level difference with its one-sample t interval.

    The interval is ``mean ± t * sd / sqrt(n)`` on ``n - 1`` degrees of freedom, as
    ``scipy.stats.ttest_1samp(d, 0).confidence_interval(confidence)`` gives. When every
    ``D_i`` is the same the spread is 0 and the interval is that one value twice (scipy
    gives NaN there); with so few pairs that says "no variation seen", not certainty.

    Example::

        >>> r = campaign_t_interval([1, 2, 0, 3, 1])
        >>> (r.mean, r.df, round(r.low, 4), round(r.high, 4))
        (1.4, 4, -0.0157, 2.8157)
        >>> flat = campaign_t_interval([2, 2, 2])  # no spread: the one value twice
        >>> (flat.low, flat.high)
        (2.0, 2.0)

    Raises:
        ValueError: fewer than 2 pairs, a non-finite value, or ``confidence`` outside
            (0, 1).
    """
    values = _differences(d, minimum=2)
    # The paired t on (D, 0) is the one-sample t on D: one implementation of the t
    # interval, and its zero-spread rule, for the whole package.
    t = paired_mean_difference(values, np.zeros_like(values), confidence)
    return CampaignInterval(
        n=t.n,
        mean=t.difference,
        sd=t.sd,
        se=t.se,
        df=t.df,
        low=t.low,
        high=t.high,
        confidence=confidence,
    )


class SignFlipInterval(NamedTuple):
    """The confidence interval of the mean campaign difference that inverts the exact
    sign-flip test: every shift ``delta`` the test at ``1 - confidence`` does not reject."""

    n: int
    """Pairs."""
    mean: float
    """Mean of the differences ``D_i`` (always inside the interval)."""
    low: float
    """Lower end; ``-inf`` when even the most extreme shift cannot be rejected (too few
    pairs: the smallest attainable p is above ``1 - confidence``)."""
    high: float
    """Upper end; ``+inf`` likewise."""
    confidence: float


def _subset_means(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The means of every non-empty subset of ``values``, sorted and unique: the only
    shifts at which the sign-flip p value of ``values - delta`` can change."""
    sums, counts = np.zeros(1), np.zeros(1)
    for v in values:
        sums = np.concatenate((sums, sums + v))
        counts = np.concatenate((counts, counts + 1))
    means: np.ndarray[Any, Any] = np.unique(sums[1:] / counts[1:])
    return means


def sign_flip_interval(d: Sequence[float] | Any, confidence: float = 0.95) -> SignFlipInterval:
    """The interval that agrees with the exact sign-flip test: ``delta`` is inside exactly
    when ``sign_flip_test(D - delta)`` has a p value above ``1 - confidence``.

    The test's p value of ``D - delta`` can only change where ``delta`` is the mean of a
    subset of ``D`` (there one signed sum ties the observed one; Hartigan 1969), and a tie
    counts as extreme, so the p value at such a point is at least that on either side.
    The accepted shifts run outward from ``mean(D)`` (where p is 1) and the ends are subset
    means, found by bisection over those candidate points. So the interval excludes 0
    exactly when the test rejects at ``1 - confidence``: the report's primary test and its
    interval never disagree, as the t interval beside them can.

    Example::

        >>> r = sign_flip_interval([1, 1, 1, 1, 1, 1])  # 6 pairs: p can reach 0.03125
        >>> (r.low, r.high)
        (1.0, 1.0)
        >>> sign_flip_interval([1, 1, 1, 1, 1]).low  # 5 pairs: nothing can be rejected
        -inf
        >>> r = sign_flip_interval([2, -1, 0, 1, 3, 0, 1, 2])  # sign-flip p = 0.125
        >>> (r.low, r.high)
        (0.0, 2.0)

    Raises:
        ValueError: as ``sign_flip_test``, or ``confidence`` outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    values = _differences(d, minimum=1)
    sign_flip_test(values)  # the same limits on N, raised before any work
    alpha = 1.0 - confidence
    centre = float(values.mean())
    candidates = _subset_means(values)
    # Candidate points in order, outermost first: an end beyond every subset mean stands
    # for the unbounded side (the p value there is the smallest attainable).
    span = float(candidates[-1] - candidates[0]) or 1.0

    def accepted(delta: float) -> bool:
        return sign_flip_test(values - delta).p_value > alpha

    def end(points: np.ndarray[Any, Any], outside: float) -> float:
        # ``points`` run from the outermost candidate towards the mean; bisection finds
        # the first accepted one (the mean itself is always accepted).
        if accepted(outside):
            return outside
        lo, hi = 0, len(points) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if accepted(float(points[mid])):
                hi = mid
            else:
                lo = mid + 1
        return float(points[lo])

    below = candidates[candidates <= centre]
    above = candidates[candidates >= centre][::-1]
    low = end(below, float(candidates[0]) - span)
    high = end(above, float(candidates[-1]) + span)
    return SignFlipInterval(
        n=len(values),
        mean=centre,
        low=-np.inf if low < candidates[0] else low,
        high=np.inf if high > candidates[-1] else high,
        confidence=confidence,
    )
