"""Multiplicity correction for several pre-declared comparisons (Holm)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p values, returned in the order given.

    Holm (Scandinavian Journal of Statistics 1979;6:65-70): sort the ``m`` p values
    ascending; the ``j``-th smallest (1-based) is multiplied by ``m - j + 1``, capped at
    1, and made non-decreasing along the sorted order (a running maximum). Rejecting
    where the adjusted value is ``<= alpha`` controls the family-wise error rate at
    ``alpha`` under any dependence between the comparisons.

    Example::

        >>> holm([0.01, 0.04, 0.03])
        [0.03, 0.06, 0.06]
        >>> holm([])
        []

    Raises:
        ValueError: a value that is not a number in [0, 1] (NaN included).
    """
    values = [float(p) for p in pvalues]
    for index, p in enumerate(values):
        if math.isnan(p) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p values must lie in [0, 1], got {pvalues[index]!r} at {index}")
    m = len(values)
    # A stable sort keeps tied p values in input order, as statsmodels does; ties get
    # the same adjusted value anyway through the running maximum.
    order = sorted(range(m), key=values.__getitem__)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * values[index]))
        adjusted[index] = running
    return adjusted
