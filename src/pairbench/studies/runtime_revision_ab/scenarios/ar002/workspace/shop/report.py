"""A one-line report of a basket."""

from __future__ import annotations

from .pricing import calc_total


def report(prices: list[float]) -> str:
    """The basket's total as text."""
    return f"total: {calc_total(prices):.2f}"
