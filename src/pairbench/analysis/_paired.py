"""Paired binary outcomes: the 2x2 table of two arms on the same trials."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np


class PairedCounts(NamedTuple):
    """The four cells of a paired 2x2 table (arm A vs arm B on the same trials)."""

    both: int
    a_only: int
    b_only: int
    neither: int

    @property
    def n(self) -> int:
        """Number of pairs."""
        return self.both + self.a_only + self.b_only + self.neither


def paired_counts(a: Sequence[bool] | Any, b: Sequence[bool] | Any) -> PairedCounts:
    """Count pairs where both, only A, only B, or neither succeeded.

    ``a[i]`` and ``b[i]`` are the two arms' outcomes on the same trial.

    Example::

        >>> paired_counts([True, True, False, False], [True, False, True, False])
        PairedCounts(both=1, a_only=1, b_only=1, neither=1)

    Raises:
        ValueError: the sequences differ in length (they would not be paired).
    """
    if len(a) != len(b):
        raise ValueError(
            f"paired outcomes need one value per trial in each arm: got {len(a)} and {len(b)}"
        )
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        x, y = a.astype(np.bool_), b.astype(np.bool_)  # truthiness, as in the loop below
        return PairedCounts(
            both=int((x & y).sum()),
            a_only=int((x & ~y).sum()),
            b_only=int((~x & y).sum()),
            neither=int((~x & ~y).sum()),
        )
    both = a_only = b_only = neither = 0
    for x, y in zip(a, b, strict=True):
        if x and y:
            both += 1
        elif x:
            a_only += 1
        elif y:
            b_only += 1
        else:
            neither += 1
    return PairedCounts(both=both, a_only=a_only, b_only=b_only, neither=neither)
