"""Paired Hodges-Lehmann estimate with the Wilcoxon signed-rank interval, as R computes it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from pairbench.analysis._wilson import _check_confidence

# R's wilcox.test uses the exact distribution below 50 non-zero differences.
EXACT_BELOW = 50
_DBL_EPSILON = float(np.finfo(np.float64).eps)

_Floats = npt.NDArray[np.float64]


class HodgesLehmann(NamedTuple):
    """Hodges-Lehmann estimate of the paired shift ``a - b`` with a signed-rank interval."""

    estimate: float | None
    """Median of the Walsh averages of the non-zero differences; None when all are zero."""
    low: float | None
    """Lower limit; None when the interval is undefined (see ``method``)."""
    high: float | None
    n: int
    """Pairs given."""
    method: str
    """How the estimate and interval were computed, or why the interval is absent."""
    exact: bool
    """True when the interval comes from the exact signed-rank distribution."""
    confidence: float
    """Confidence the interval is stated at: the requested level, or lower when it is not
    achievable with so few differences (R's ``conf.level`` attribute)."""
    n_zero: int
    """Zero differences, dropped before ranking (Wilcoxon's convention, as in R)."""


def _signrank_cdf(n: int) -> _Floats:
    """P(V <= v) for v = 0..n(n+1)/2, V the signed-rank statistic of n differences."""
    pmf = np.zeros(n * (n + 1) // 2 + 1)
    pmf[0] = 1.0
    for k in range(1, n + 1):
        # Each rank k joins the positive set or not with probability 1/2. Halving at each
        # step keeps values as exact dyadic fractions for n < 50, so sums equal R's
        # count * 2^-n arithmetic bit for bit.
        shifted = np.zeros_like(pmf)
        shifted[k:] = pmf[:-k]
        pmf = (pmf + shifted) / 2.0
    # Sequential cumulative sums, in the order R's qsignrank/psignrank add them.
    return np.cumsum(pmf)


def _walsh_averages(x: _Floats) -> _Floats:
    i, j = np.triu_indices(len(x))
    return np.sort(x[i] + x[j]) / 2.0


def _median_of_sorted(xs: _Floats) -> float:
    half = len(xs) // 2
    if len(xs) % 2:
        return float(xs[half])
    return float((xs[half - 1] + xs[half]) / 2.0)


def _r_w(x: _Floats, d: float) -> float:
    """R's ``W(d)``: the continuity- and tie-corrected signed-rank z of ``x - d``."""
    xd = x - d
    xd = xd[xd != 0]
    nx = len(xd)
    if nx == 0:
        return math.nan
    from scipy.stats import rankdata  # on use: scipy.stats costs ~0.6 s to import

    ranks = rankdata(np.abs(xd))
    zd = float(ranks[xd > 0].sum()) - nx * (nx + 1) / 4
    _, ties = np.unique(ranks, return_counts=True)
    sigma = math.sqrt(nx * (nx + 1) * (2 * nx + 1) / 24 - float((ties**3 - ties).sum()) / 48)
    if sigma == 0:
        return math.nan
    return (zd - math.copysign(0.5, zd) * (zd != 0)) / sigma


def hodges_lehmann(
    a: Sequence[float],
    b: Sequence[float],
    confidence: float = 0.95,
    *,
    exact: bool | None = None,
) -> HodgesLehmann:
    """Hodges-Lehmann shift of ``a - b`` with the Wilcoxon signed-rank interval.

    Reproduces R's ``wilcox.test(a, b, paired = TRUE, conf.int = TRUE)`` (two-sided,
    continuity correction on). Zero differences are dropped first, as R does. The interval
    is exact (order statistics of the Walsh averages at signed-rank quantiles) when
    ``exact`` is true, or None and fewer than 50 non-zero differences remain, and there
    are no ties or zeros; otherwise it is normal-approximate with continuity and tie
    corrections. R solves for the approximate limits with ``uniroot`` (tolerance 1e-4);
    here they are found exactly, as the Walsh averages where the corrected z statistic
    crosses its quantiles, so they agree with R to that tolerance. The estimate is always
    the median of the Walsh averages (R's normal branch finds it by ``uniroot`` too).

    Example::

        >>> r = hodges_lehmann([12, 15, 11, 20, 14, 16, 16], [10, 11, 12, 13, 9, 10, 7])
        >>> (r.estimate, r.low, r.high, r.exact)
        (4.75, 1.5, 7.5, True)

    Raises:
        ValueError: no pairs, sequences of different lengths, NaN or infinite values, or
            ``confidence`` outside (0, 1).
    """
    from scipy.stats import norm  # on use: scipy.stats costs ~0.6 s to import

    _check_confidence(confidence)
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if xa.ndim != 1 or xa.shape != xb.shape:
        raise ValueError(f"paired values need one per trial in each arm: {xa.size} vs {xb.size}")
    if xa.size == 0:
        raise ValueError("no pairs: a Hodges-Lehmann estimate needs at least one")
    if not (np.isfinite(xa).all() and np.isfinite(xb).all()):
        raise ValueError("a or b contains NaN or infinity; drop missing values before calling")
    diffs = xa - xb
    x = diffs[diffs != 0]
    n_pairs, n, n_zero = int(xa.size), int(x.size), int(xa.size - x.size)
    zeros_note = f"; {n_zero} zero differences dropped before ranking" if n_zero else ""
    if n == 0:
        return HodgesLehmann(
            None, None, None, n_pairs, f"all {n_pairs} differences are zero: no estimate",
            False, confidence, n_zero,
        )  # fmt: skip
    walsh = _walsh_averages(x)
    estimate = _median_of_sorted(walsh)
    ties = len(np.unique(np.abs(x))) != n
    use_exact = (n < EXACT_BELOW if exact is None else exact) and not ties and n_zero == 0
    alpha = 1.0 - confidence
    if use_exact:
        cdf = _signrank_cdf(n)
        # R's qsignrank: the smallest q with P(V <= q) >= p, fuzzed by 10 epsilon.
        qu = int(np.argmax(cdf >= alpha / 2 - 10 * _DBL_EPSILON))
        qu = max(qu, 1)
        ql = n * (n + 1) // 2 - qu
        achieved = 2.0 * float(cdf[qu - 1])
        stated = confidence
        if achieved - alpha > alpha / 2:
            stated = 1.0 - float(f"{achieved:.2g}")  # R: 1 - signif(achieved.alpha, 2)
        if stated <= 0:
            return _no_interval(estimate, n_pairs, n, n_zero)
        method = (
            "Hodges-Lehmann estimate (median of Walsh averages of a - b) with the exact "
            "Wilcoxon signed-rank interval, as R's wilcox.test(paired = TRUE, conf.int = TRUE)"
        )
        return HodgesLehmann(
            estimate, float(walsh[qu - 1]), float(walsh[ql]), n_pairs, method, True, stated,
            n_zero,
        )  # fmt: skip

    why = "ties" if ties else ("zero differences" if n_zero else f"{n} >= {EXACT_BELOW}")
    if exact is False:
        why = "exact=False"
    w_min, w_max = _r_w(x, float(x.min())), _r_w(x, float(x.max()))
    if not (math.isfinite(w_min) and math.isfinite(w_max)):
        method = (
            f"Hodges-Lehmann estimate; no interval: all {n} non-zero differences are equal, "
            f"so the signed-rank statistic has no spread{zeros_note}"
        )
        return HodgesLehmann(estimate, None, None, n_pairs, method, False, 0.0, n_zero)
    # R widens alpha until the quantiles fall inside [W(max), W(min)].
    while w_min - norm.isf(alpha / 2) < 0 or w_max - norm.ppf(alpha / 2) > 0:
        alpha *= 2
    stated = confidence
    if alpha >= 1 or 1 - confidence < alpha * 0.75:
        stated = 1.0 - min(1.0, alpha)
    method = (
        "Hodges-Lehmann estimate (median of Walsh averages of a - b) with the "
        f"normal-approximate Wilcoxon signed-rank interval ({why}), continuity and tie "
        "corrected as R's wilcox.test(paired = TRUE, conf.int = TRUE); limits are the exact "
        "crossing points, which R's uniroot finds to 1e-4" + zeros_note
    )
    if alpha >= 1:
        # R then reports [median(x), median(x)] at conf.level 0, which need not even
        # contain its own estimate; an absent interval says the same thing honestly.
        return _no_interval(estimate, n_pairs, n, n_zero)
    # Between consecutive Walsh averages the number of them above d, K, is constant and
    # equals the positive-rank sum of x - d; the tie term only involves equal x values,
    # so the corrected z is a non-increasing step function of d whose steps sit exactly at
    # the sorted Walsh averages. Each limit is the Walsh average where it crosses a quantile.
    total = n * (n + 1) // 2
    _, groups = np.unique(x, return_counts=True)
    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24 - float((groups**3 - groups).sum()) / 48)
    centred = (total - np.arange(1, total + 1)) - total / 2  # K - N/2 just above w_(m)
    z_above = (centred - 0.5 * np.sign(centred)) / sigma
    low = _crossing(walsh, z_above, float(norm.isf(alpha / 2)))
    high = _crossing(walsh, z_above, float(norm.ppf(alpha / 2)))
    return HodgesLehmann(estimate, low, high, n_pairs, method, False, stated, n_zero)


def _no_interval(estimate: float, n_pairs: int, n: int, n_zero: int) -> HodgesLehmann:
    method = (
        f"Hodges-Lehmann estimate; no interval: {n} non-zero differences are too few for a "
        "signed-rank interval at any confidence (R reports conf.level 0)"
    )
    return HodgesLehmann(estimate, None, None, n_pairs, method, False, 0.0, n_zero)


def _crossing(walsh: _Floats, z_above: _Floats, quantile: float) -> float:
    """The first Walsh average past which the step function drops below ``quantile``."""
    below = z_above < quantile
    # R brackets the root within [min, max], so with no drop it converges on the maximum.
    return float(walsh[int(np.argmax(below))] if below.any() else walsh[-1])
