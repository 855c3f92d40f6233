"""Newcombe's score interval for the difference of two paired proportions."""

from __future__ import annotations

import math
from typing import NamedTuple

from pairbench.analysis._wilson import wilson

NEWCOMBE_METHOD = "newcombe-1998-method-10"


class PairedProportionDifference(NamedTuple):
    """Difference of success rates (A − B) on the same trials, with its interval.

    ``phi`` is the *adjusted* phi that the interval uses (Newcombe's continuity-adjusted
    numerator); report the plain correlation between arms with `phi_correlation`.
    """

    difference: float
    low: float
    high: float
    phi: float
    n: int
    method: str


def _check_counts(both: int, a_only: int, b_only: int, neither: int) -> tuple[int, ...]:
    counts = {"both": both, "a_only": a_only, "b_only": b_only, "neither": neither}
    for name, value in counts.items():
        if isinstance(value, bool) or value != int(value) or value < 0:
            raise ValueError(f"{name} must be a non-negative whole number, got {value!r}")
    return tuple(int(v) for v in counts.values())


def _phi(a: int, b: int, c: int, d: int, *, adjusted: bool) -> float:
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    # A zero margin (one arm passed, or failed, every trial) leaves the correlation
    # undefined; Newcombe (1998) sets phi = 0 there, which reduces method 10 to the
    # independent-samples square-and-add interval.
    if margins == 0:
        return 0.0
    numerator = float(a * d - b * c)
    if adjusted and numerator >= 0:
        # Newcombe (1998), method 10: a continuity-type adjustment shrinks a positive
        # numerator by n/2 (floored at 0); a negative numerator is left as it is.
        numerator = max(numerator - (a + b + c + d) / 2.0, 0.0)
    return numerator / math.sqrt(margins)


def phi_correlation(both: int, a_only: int, b_only: int, neither: int) -> float:
    """The phi (Pearson) correlation between the two arms' binary outcomes per trial.

    Unadjusted: ``(both * neither - a_only * b_only) / sqrt(product of the margins)``;
    0.0 when any margin is zero (for example when one arm passes every trial).

    Example::

        >>> round(phi_correlation(40, 5, 3, 12), 4)
        0.662
        >>> phi_correlation(30, 0, 0, 0)
        0.0

    Raises:
        ValueError: a negative or non-integer count.
    """
    a, b, c, d = _check_counts(both, a_only, b_only, neither)
    return _phi(a, b, c, d, adjusted=False)


def _half_width(x: float, y: float, phi: float) -> float:
    # sqrt(x^2 - 2*phi*x*y + y^2) computed on a sorted pair so that swapping the arms
    # gives bit-identical widths; clamped at 0 because with |phi| = 1 and x = y the
    # exact value is 0 and rounding can make it a hair negative.
    lo, hi = sorted((x, y))
    return math.sqrt(max(0.0, lo * lo + hi * hi - 2.0 * phi * lo * hi))


def paired_proportion_difference(
    both: int, a_only: int, b_only: int, neither: int, confidence: float = 0.95
) -> PairedProportionDifference:
    """Success rate of arm A minus arm B on the same trials, with Newcombe's interval.

    The estimate is ``(a_only - b_only) / n``. The interval is Newcombe's method 10
    (Statistics in Medicine 1998;17:2635-2650): Wilson score intervals ``(l1, u1)`` and
    ``(l2, u2)`` for the two arms' success rates ``p1``, ``p2``, combined as::

        low  = D - sqrt((p1 - l1)^2 - 2*phi*(p1 - l1)*(u2 - p2) + (u2 - p2)^2)
        high = D + sqrt((u1 - p1)^2 - 2*phi*(u1 - p1)*(p2 - l2) + (p2 - l2)^2)

    with his adjusted phi: numerator ``max(ad - bc - n/2, 0)`` when ``ad - bc >= 0``,
    ``ad - bc`` when negative, over the square root of the product of the margins;
    ``phi = 0`` when a margin is zero.

    Example (Newcombe's worked example)::

        >>> r = paired_proportion_difference(36, 12, 2, 0)
        >>> (round(r.difference, 4), round(r.low, 4), round(r.high, 4))
        (0.2, 0.0569, 0.3404)

    Raises:
        ValueError: no pairs (``n == 0``), a negative or non-integer count, or
            ``confidence`` outside (0, 1).
    """
    a, b, c, d = _check_counts(both, a_only, b_only, neither)
    n = a + b + c + d
    if n == 0:
        raise ValueError(
            "paired_proportion_difference needs at least one pair (n > 0): with no paired "
            "trials there is no difference to estimate (report it as n/a instead)"
        )
    arm_a = wilson(a + b, n, confidence)
    arm_b = wilson(a + c, n, confidence)
    p1, p2 = arm_a.estimate, arm_b.estimate
    phi = _phi(a, b, c, d, adjusted=True)
    difference = (b - c) / n
    delta = _half_width(p1 - arm_a.low, arm_b.high - p2, phi)
    epsilon = _half_width(arm_a.high - p1, p2 - arm_b.low, phi)
    # |phi| <= 1 keeps the bounds within [l1 - u2, u1 - l2], a subset of [-1, 1]; the
    # clamp only absorbs rounding.
    low = max(-1.0, difference - delta)
    high = min(1.0, difference + epsilon)
    return PairedProportionDifference(
        difference=difference, low=low, high=high, phi=phi, n=n, method=NEWCOMBE_METHOD
    )
