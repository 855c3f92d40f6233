"""The analyses of declared hypotheses: paired mean differences, equivalence within a
margin (TOST), and equivalence of two paired rates.

Equivalence is judged by the whole interval: "equivalent" only when the 95% interval lies
inside ``(-margin, margin)``. For the paired t that is the same as both one-sided tests
(TOST) rejecting at 2.5% each, stricter than the 90% interval (5% each) often used; the
TOST p value is reported beside it. A test that fails to find a difference is never
evidence of equivalence: with few pairs the interval is wide and the verdict stays "not
shown equivalent" whatever the p value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from pairbench.analysis._mcnemar import mcnemar_exact
from pairbench.analysis._newcombe import NEWCOMBE_METHOD, paired_proportion_difference
from pairbench.analysis._paired import PairedCounts


class PairedMeanDifference(NamedTuple):
    """The mean of paired differences (A − B) with its paired-t interval and test."""

    n: int
    """Pairs."""
    mean_a: float
    mean_b: float
    difference: float
    """Mean of ``a[i] - b[i]`` (equal to ``mean_a - mean_b``)."""
    sd: float
    """Sample standard deviation of the differences (``n - 1`` in the denominator)."""
    se: float
    """``sd / sqrt(n)``."""
    df: int
    """``n - 1``."""
    low: float
    high: float
    """``difference ± t(1 - (1 - confidence) / 2, df) * se``."""
    p_value: float
    """Two-sided paired t test of a zero mean difference."""
    confidence: float


class PairedEquivalence(NamedTuple):
    """A paired mean difference judged against ``±margin`` (two one-sided tests)."""

    difference: PairedMeanDifference
    margin: float
    """The margin in the metric's unit (a relative margin already multiplied out)."""
    p_lower: float
    """One-sided p of H0 ``mean difference <= -margin``."""
    p_upper: float
    """One-sided p of H0 ``mean difference >= margin``."""
    tost_p: float
    """``max(p_lower, p_upper)``: the TOST p value."""
    equivalent: bool
    """The whole interval lies inside ``(-margin, margin)``."""


class RateEquivalence(NamedTuple):
    """Two arms' rates on the same pairs, their difference judged against ``±margin``."""

    counts: PairedCounts
    """Pairs where both arms, only A, only B, or neither had the event (complied)."""
    difference: float
    """Rate of A − rate of B: ``(a_only - b_only) / n``."""
    low: float
    high: float
    """Newcombe's score interval (method 10) at ``confidence``."""
    method: str
    mcnemar_p: float
    """Exact McNemar p (two-sided): a test of a difference, not of equivalence."""
    margin: float
    equivalent: bool
    """The whole interval lies inside ``(-margin, margin)``."""


def _pairs(a: Sequence[float] | Any, b: Sequence[float] | Any) -> tuple[Any, Any]:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(
            f"paired values need one value per pair in each arm: got {x.shape} and {y.shape}"
        )
    if len(x) < 2:
        raise ValueError(
            f"a paired t interval needs at least 2 pairs (got {len(x)}): with fewer there is "
            "no spread to estimate (report it as not computed)"
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("paired values must be finite: drop missing pairs (NaN) first")
    return x, y


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def paired_mean_difference(
    a: Sequence[float] | Any, b: Sequence[float] | Any, confidence: float = 0.95
) -> PairedMeanDifference:
    """Mean of ``a[i] - b[i]`` with its paired-t interval and two-sided p value.

    When every difference is the same the spread is 0: the interval is that one value and
    the p value is 1.0 if it is 0, else 0.0 (the t statistic would be 0/0 or infinite).

    Example::

        >>> r = paired_mean_difference([10, 12, 9, 14], [9, 10, 9, 11])
        >>> (r.difference, round(r.low, 4), round(r.high, 4), round(r.p_value, 4))
        (1.5, -0.5543, 3.5543, 0.1027)

    Raises:
        ValueError: fewer than 2 pairs, sequences of different lengths, a non-finite
            value, or ``confidence`` outside (0, 1).
    """
    from scipy.stats import t  # lazily: scipy costs start-up time

    _check_confidence(confidence)
    x, y = _pairs(a, b)
    d = x - y
    n = len(d)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    if se == 0.0:
        p = 1.0 if mean == 0.0 else 0.0
        low = high = mean
    else:
        half = float(t.ppf(0.5 + confidence / 2.0, n - 1)) * se
        low, high = mean - half, mean + half
        p = min(1.0, 2.0 * float(t.sf(abs(mean) / se, n - 1)))
    return PairedMeanDifference(
        n=n,
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        difference=mean,
        sd=sd,
        se=se,
        df=n - 1,
        low=low,
        high=high,
        p_value=p,
        confidence=confidence,
    )


def paired_equivalence(
    a: Sequence[float] | Any, b: Sequence[float] | Any, margin: float, confidence: float = 0.95
) -> PairedEquivalence:
    """Is the paired mean difference (A − B) within ``±margin``?

    The verdict is the interval's (``paired_mean_difference`` at ``confidence``): inside
    ``(-margin, margin)`` or not. The TOST p value is the larger of the one-sided paired t
    p values against ``-margin`` (H0: at most it) and ``+margin`` (H0: at least it), as
    ``statsmodels.stats.weightstats.ttost_paired`` computes it. With no spread in the
    differences each one-sided p is 0.0 or 1.0.

    Example::

        >>> r = paired_equivalence([100, 102, 99, 101, 100], [100, 101, 100, 100, 101], 3.0)
        >>> (r.equivalent, round(r.tost_p, 4))
        (True, 0.0013)

    Raises:
        ValueError: as ``paired_mean_difference``, or a margin that is not positive.
    """
    from scipy.stats import t

    if not math.isfinite(margin) or margin <= 0:
        raise ValueError(f"margin must be a positive number, got {margin!r}")
    r = paired_mean_difference(a, b, confidence)
    if r.se == 0.0:
        p_lower = 0.0 if r.difference > -margin else 1.0
        p_upper = 0.0 if r.difference < margin else 1.0
    else:
        p_lower = float(t.sf((r.difference + margin) / r.se, r.df))
        p_upper = float(t.cdf((r.difference - margin) / r.se, r.df))
    return PairedEquivalence(
        difference=r,
        margin=margin,
        p_lower=p_lower,
        p_upper=p_upper,
        tost_p=max(p_lower, p_upper),
        equivalent=-margin < r.low and r.high < margin,
    )


def paired_rate_equivalence(
    counts: PairedCounts, margin: float, confidence: float = 0.95
) -> RateEquivalence:
    """Is the difference of two paired rates (A − B) within ``±margin``?

    ``counts`` are the pairs where both arms, only A, only B or neither had the event
    (``paired_counts``). The interval is Newcombe's (``paired_proportion_difference``);
    the verdict is "equivalent" only when all of it lies inside ``(-margin, margin)``. The
    exact McNemar p value is reported beside it and never decides it: a small sample
    gives p = 1.0 and an interval far wider than any margin.

    Example::

        >>> r = paired_rate_equivalence(PairedCounts(0, 1, 1, 8), margin=0.10)
        >>> (r.mcnemar_p, r.equivalent, round(r.low, 3), round(r.high, 3))
        (1.0, False, -0.324, 0.324)

    Raises:
        ValueError: no pairs, a negative count, a margin outside (0, 1), or ``confidence``
            outside (0, 1).
    """
    if not 0.0 < margin < 1.0:
        raise ValueError(f"a rate margin is a difference of proportions in (0, 1), got {margin!r}")
    both, a_only, b_only, neither = counts
    r = paired_proportion_difference(both, a_only, b_only, neither, confidence)
    return RateEquivalence(
        counts=PairedCounts(both, a_only, b_only, neither),
        difference=r.difference,
        low=r.low,
        high=r.high,
        method=NEWCOMBE_METHOD,
        mcnemar_p=mcnemar_exact(a_only, b_only),
        margin=margin,
        equivalent=-margin < r.low and r.high < margin,
    )
