"""Binomial(n, p) probabilities for counts too large to sum in exact integers.

``scipy.stats.binom`` computes these with Boost-backed ufuncs that live in
``scipy.special``; calling them here skips importing ``scipy.stats`` (about 0.55 s of wall
time and 0.7 s of CPU on the bench machine, against about 0.15 s for ``scipy.special``),
which a report otherwise pays as soon as one comparison has more than 1,000 discordant
pairs. The values are scipy.stats' own, bit for bit (tests/analysis/test_binomial.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import NamedTuple

_Ufunc = Callable[[float, float, float], float]


class _Binom(NamedTuple):
    cdf: _Ufunc
    sf: _Ufunc
    pmf: _Ufunc
    ppf: _Ufunc


@cache
def _ufuncs() -> _Binom:
    """The four functions as scipy.stats.binom calls them in its ``_cdf`` and kin."""
    try:
        # Private names: scipy.stats.binom's own _cdf/_sf/_pmf/_ppf call exactly these.
        from scipy.special._ufuncs import (
            _binom_cdf,
            _binom_pmf,
            _binom_ppf,
            _binom_sf,
        )
    except ImportError:  # a scipy that moved them: the public route, slower to import
        from scipy.stats import binom

        return _Binom(binom.cdf, binom.sf, binom.pmf, binom.ppf)
    return _Binom(_binom_cdf, _binom_sf, _binom_pmf, _binom_ppf)


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), as ``scipy.stats.binom.cdf``."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return float(_ufuncs().cdf(float(k), float(n), p))


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X > k) for X ~ Binomial(n, p), as ``scipy.stats.binom.sf``."""
    if k < 0:
        return 1.0
    if k >= n:
        return 0.0
    return float(_ufuncs().sf(float(k), float(n), p))


def binom_pmf(k: int, n: int, p: float) -> float:
    """P(X = k) for X ~ Binomial(n, p), as ``scipy.stats.binom.pmf``."""
    if k < 0 or k > n:
        return 0.0
    return float(_ufuncs().pmf(float(k), float(n), p))


def binom_ppf(q: float, n: int, p: float) -> int:
    """The smallest k with P(X <= k) >= q (0 < q < 1), as ``scipy.stats.binom.ppf``."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be strictly between 0 and 1, got {q!r}")
    # scipy.stats' discrete _ppf: the continuous inverse rounded up, then one step back
    # when the count below it already reaches q.
    guess = math.ceil(float(_ufuncs().ppf(q, float(n), p)))
    below = max(guess - 1, 0)
    return below if binom_cdf(below, n, p) >= q else guess
