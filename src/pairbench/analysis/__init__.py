"""Paired statistics as pure functions over plain values: no I/O, no global state.

**Usage**::

    from pairbench.analysis import mcnemar_exact, paired_counts, wilson

    counts = paired_counts(a_passed, b_passed)
    p = mcnemar_exact(counts.a_only, counts.b_only)
    rate = wilson(sum(a_passed), len(a_passed))
"""

from pairbench.analysis._mcnemar import mcnemar_exact
from pairbench.analysis._median import (
    MedianDifference,
    median,
    order_statistic_rank,
    paired_median_difference,
)
from pairbench.analysis._paired import PairedCounts, paired_counts
from pairbench.analysis._wilson import Proportion, wilson

__all__ = [
    "MedianDifference",
    "PairedCounts",
    "Proportion",
    "mcnemar_exact",
    "median",
    "order_statistic_rank",
    "paired_counts",
    "paired_median_difference",
    "wilson",
]
