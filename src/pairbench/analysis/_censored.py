"""Medians and paired differences when timeouts censor values at the trial time limit."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

Direction = Literal["=", ">=", "<=", "unknown"]
"""How a recorded paired difference relates to the true one."""


class CensoredMedian(NamedTuple):
    """A median that says when timeouts (censored at ``limit``) decide it."""

    median: float | None
    """The median; None when censoring reaches it (then it is only known to exceed limit)."""
    display: str
    """The median for people: a number, or ``"> 60000 ms"`` when censoring reaches it."""
    n: int
    n_censored: int
    reaches_median: bool
    """True when the middle value(s) include a censored one."""


class CensoredDifference(NamedTuple):
    """One paired difference ``a - b`` and whether a timeout makes it a bound."""

    value: float
    """The recorded difference (a censored arm contributes its recorded value)."""
    censored: bool
    direction: Direction
    """``"="`` exact; ``">="`` only A censored, so the true difference is at least
    ``value``; ``"<="`` only B censored; ``"unknown"`` both censored."""


class CensoredMedianDifference(NamedTuple):
    """Median of paired differences with what censoring could do to it."""

    estimate: float | None
    """Median of the recorded differences; None when there are no pairs."""
    lower_bound: float | None
    """Smallest the median could be whatever the censored values are; None if unbounded."""
    upper_bound: float | None
    n: int
    n_censored: int
    n_at_least: int
    """Pairs with only A censored (true difference >= recorded)."""
    n_at_most: int
    """Pairs with only B censored (true difference <= recorded)."""
    n_unknown: int
    """Pairs with both arms censored."""
    could_move: bool
    """True when some values of the censored trials would give a different median."""


def _fmt(x: float, unit: str) -> str:
    text = str(int(x)) if x.is_integer() else repr(x)
    return f"{text} {unit}" if unit else text


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2.0


def censored_median(
    values: Sequence[float], censored: Sequence[bool], limit: float, *, unit: str = ""
) -> CensoredMedian:
    """Median of ``values`` where ``censored[i]`` marks a timeout at ``limit``.

    A timed-out trial's true value exceeds ``limit``, and every completed value is at most
    ``limit``, so treating censored values as +infinity orders the sample correctly. If a
    middle value is then censored the median is only known to exceed the limit and is shown
    as ``"> limit"``; otherwise it is the exact sample median.

    Example::

        >>> censored_median([900, 1200, 60000, 60000], [False, False, True, True], 60000,
        ...     unit="ms").display
        '> 60000 ms'
        >>> censored_median([900, 1200, 1500, 60000], [False, False, False, True], 60000).median
        1350.0

    Raises:
        ValueError: no values, mismatched lengths, NaN, or a completed value above ``limit``.
    """
    xs = [float(v) for v in values]
    flags = [bool(c) for c in censored]
    if len(flags) != len(xs):
        raise ValueError(f"need one censored flag per value: {len(xs)} values, {len(flags)}")
    if not xs:
        raise ValueError("median of no values is undefined (report it as n/a)")
    if any(math.isnan(v) for v in xs):
        raise ValueError("values contain NaN; drop missing values before calling")
    if any(v > limit for v, c in zip(xs, flags, strict=True) if not c):
        raise ValueError(f"a completed value exceeds the limit {limit}: is it censored?")
    med = _median([math.inf if c else v for v, c in zip(xs, flags, strict=True)])
    n_censored = sum(flags)
    if math.isinf(med):
        return CensoredMedian(None, f"> {_fmt(float(limit), unit)}", len(xs), n_censored, True)
    return CensoredMedian(med, _fmt(med, unit), len(xs), n_censored, False)


def censored_paired_differences(
    a: Sequence[float],
    b: Sequence[float],
    censored_a: Sequence[bool],
    censored_b: Sequence[bool],
) -> list[CensoredDifference]:
    """Paired differences ``a - b``; a pair with a censored member is itself censored.

    Example::

        >>> [d.direction for d in censored_paired_differences(
        ...     [5, 60, 7, 60], [3, 4, 60, 60], [False, True, False, True],
        ...     [False, False, True, True])]
        ['=', '>=', '<=', 'unknown']

    Raises:
        ValueError: sequences of different lengths or NaN values.
    """
    if len({len(a), len(b), len(censored_a), len(censored_b)}) != 1:
        raise ValueError("a, b, censored_a and censored_b need one entry per pair")
    out: list[CensoredDifference] = []
    for x, y, ca, cb in zip(a, b, censored_a, censored_b, strict=True):
        value = float(x) - float(y)
        if math.isnan(value):
            raise ValueError("a or b contains NaN; drop missing values before calling")
        direction: Direction = (
            "unknown" if ca and cb else ">=" if ca else "<=" if cb else "="
        )  # fmt: skip
        out.append(CensoredDifference(value, bool(ca or cb), direction))
    return out


def paired_median_difference_censored(
    a: Sequence[float],
    b: Sequence[float],
    censored_a: Sequence[bool],
    censored_b: Sequence[bool],
) -> CensoredMedianDifference:
    """Median of paired differences ``a - b``, with bounds over what timeouts could hide.

    Rule: each censored difference could truly be anything on its side of the recorded
    value (``">="`` up to +infinity, ``"<="`` down to -infinity, ``"unknown"`` either way).
    The median is smallest with every ``">="`` at its recorded value and the others at
    -infinity, and largest the other way round; censoring could move the median exactly
    when those two differ. The estimate is the median of the recorded differences.

    Example::

        >>> r = paired_median_difference_censored([5, 6, 9, 60, 8], [3, 3, 4, 5, 6],
        ...     [False, False, False, True, False], [False] * 5)
        >>> (r.estimate, r.lower_bound, r.upper_bound, r.could_move, r.n_at_least)
        (3.0, 3.0, 3.0, False, 1)

    Raises:
        ValueError: as :func:`censored_paired_differences`.
    """
    diffs = censored_paired_differences(a, b, censored_a, censored_b)
    counts = {k: sum(d.direction == k for d in diffs) for k in (">=", "<=", "unknown")}
    censored = len(diffs) - sum(d.direction == "=" for d in diffs)
    if not diffs:
        return CensoredMedianDifference(None, None, None, 0, 0, 0, 0, 0, False)
    low = _median([d.value if d.direction in ("=", ">=") else -math.inf for d in diffs])
    high = _median([d.value if d.direction in ("=", "<=") else math.inf for d in diffs])
    return CensoredMedianDifference(
        _median([d.value for d in diffs]),
        low if math.isfinite(low) else None,
        high if math.isfinite(high) else None,
        len(diffs),
        censored,
        counts[">="],
        counts["<="],
        counts["unknown"],
        low != high,
    )
