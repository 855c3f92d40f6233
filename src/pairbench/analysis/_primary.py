"""A comparison's primary analysis: the declared test at its level and direction, with the
declared interval, and whether the two can disagree.

Two units: trial-level McNemar over the paired 2x2 table, and campaign-level sign flip over
the per-pair differences ``D_i``. A one-sided analysis at ``alpha`` reads its bound from the
two-sided interval at ``1 - 2 alpha`` (the bound on the declared side; the other end is the
parameter's own limit), which is the interval that agrees with a one-sided test built from
the same tails.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from pairbench.analysis._campaign import (
    MAX_EXACT_PAIRS,
    campaign_t_interval,
    sign_flip_interval,
    sign_flip_test,
)
from pairbench.analysis._discordant_share import discordant_share_interval, mcnemar_p
from pairbench.analysis._newcombe import paired_proportion_difference
from pairbench.analysis._paired import PairedCounts

Sided = Literal["two-sided", "greater", "less"]
ESTIMATES = {
    "clopper-pearson": "share of discordant pairs A won (1/2 under the null)",
    "mid-p": "share of discordant pairs A won (1/2 under the null)",
    "newcombe": "difference in success, A − B (0 under the null)",
    "sign-flip": "mean campaign difference D, A − B passes per pair (0 under the null)",
    "t": "mean campaign difference D, A − B passes per pair (0 under the null)",
}
"""What each interval estimates, and its value under the null."""


class Primary(NamedTuple):
    """A primary analysis's numbers."""

    n: int
    """Pairs analysed: trials both arms scored (McNemar), or complete campaign pairs."""
    p_value: float | None
    """The declared test's p value; None when not computed (``reason``)."""
    estimate: float | None
    """The point estimate the interval is about (``ESTIMATES``)."""
    low: float | None
    """Lower end; None: unbounded."""
    high: float | None
    """Upper end; None: unbounded."""
    confidence: float
    """``1 - alpha`` (two-sided) or ``1 - alpha`` one-sided, from the ``1 - 2 alpha`` interval."""
    rejects: bool | None
    """``p_value <= alpha``; None when not computed."""
    reason: str | None = None
    """Why nothing was computed."""


def _one_side(low: float, high: float, sided: Sided, floor: float | None, ceiling: float | None
              ) -> tuple[float | None, float | None]:  # fmt: skip
    if sided == "greater":
        return low, ceiling
    if sided == "less":
        return floor, high
    return low, high


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def mcnemar_primary(
    counts: PairedCounts, test: str, interval: str, alpha: float, sided: Sided
) -> Primary:
    """The trial-level primary: exact or mid-p McNemar and its interval.

    Example::

        >>> r = mcnemar_primary(PairedCounts(5, 9, 1, 5), "mcnemar-exact", "clopper-pearson",
        ...                     0.05, "two-sided")
        >>> (r.n, round(r.p_value, 4), r.estimate, round(r.low, 3), r.rejects)
        (20, 0.0215, 0.9, 0.555, True)
    """
    mid = test == "mcnemar-midp"
    p = mcnemar_p(counts.a_only, counts.b_only, sided, mid_p=mid)
    level = 1.0 - (alpha if sided == "two-sided" else 2.0 * alpha)
    discordant = counts.a_only + counts.b_only
    estimate: float | None
    if interval == "newcombe":
        if counts.n == 0:
            return Primary(0, None, None, None, None, 1 - alpha, None, "no pair both arms scored")
        d = paired_proportion_difference(*counts, confidence=level)
        low, high = _one_side(d.low, d.high, sided, -1.0, 1.0)
        estimate = d.difference
    else:
        lo, hi = discordant_share_interval(
            counts.a_only, counts.b_only, level, mid_p=interval == "mid-p"
        )
        low, high = _one_side(lo, hi, sided, 0.0, 1.0)
        estimate = counts.a_only / discordant if discordant else None
    return Primary(counts.n, p, estimate, low, high, 1.0 - alpha, p <= alpha)


def campaign_primary(
    d: Sequence[float] | Any, interval: str, alpha: float, sided: Sided
) -> Primary:
    """The campaign-level primary: the exact sign-flip test over the pairs' ``D_i`` and the
    interval that inverts it (or the t interval, declared).

    Example::

        >>> r = campaign_primary([1, 2, 1, 0, 3, 1], "sign-flip", 0.05, "two-sided")
        >>> (r.n, r.p_value, r.estimate, r.low, r.high, r.rejects)
        (6, 0.0625, 1.3333333333333333, 0.0, 3.0, False)
    """
    values = [float(x) for x in d]
    n = len(values)
    if n == 0:
        return Primary(0, None, None, None, None, 1 - alpha, None, "no complete pair")
    if n > MAX_EXACT_PAIRS:
        reason = f"{n} pairs: the exact test stops at {MAX_EXACT_PAIRS}"
        return Primary(n, None, sum(values) / n, None, None, 1 - alpha, None, reason)
    test = sign_flip_test(values, sided)
    level = 1.0 - (alpha if sided == "two-sided" else 2.0 * alpha)
    if interval == "t":
        if n < 2:
            low, high = -math.inf, math.inf
        else:
            t = campaign_t_interval(values, level)
            low, high = t.low, t.high
    else:
        inv = sign_flip_interval(values, level)
        low, high = inv.low, inv.high
    lo, hi = _one_side(low, high, sided, -math.inf, math.inf)
    return Primary(
        n,
        test.p_value,
        test.mean,
        None if lo is None else _finite(lo),
        None if hi is None else _finite(hi),
        1.0 - alpha,
        test.p_value <= alpha,
    )
