"""Prices of a basket."""

from __future__ import annotations


def calc_total(prices: list[float], tax: float = 0.2) -> float:
    """The basket's total with tax."""
    return round(sum(prices) * (1 + tax), 2)
