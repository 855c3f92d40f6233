"""Cluster-robust standard error of a mean of trials grouped by task."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt


class ClusterIndex(NamedTuple):
    """Values checked and each value's cluster as 0..clusters-1."""

    values: npt.NDArray[np.float64]
    cluster_of: npt.NDArray[np.intp]
    clusters: int


def cluster_index(
    values: Sequence[float] | npt.NDArray[np.float64],
    clusters: Sequence[Hashable] | npt.NDArray[np.generic],
) -> ClusterIndex:
    """Validate ``values`` (finite, non-empty) against one cluster label each; index them.

    Shared by every clustered statistic so they refuse the same bad input the same way.
    """
    y = np.asarray(values, dtype=np.float64)
    labels = np.asarray(clusters)
    if y.ndim != 1 or labels.shape != y.shape:
        raise ValueError(f"need one cluster label per value: {y.size} values, {labels.size} labels")
    if y.size == 0:
        raise ValueError("no values: a statistic of nothing is undefined")
    if not np.isfinite(y).all():
        raise ValueError("values contain NaN or infinity; drop missing values before calling")
    _, cluster_of = np.unique(labels, return_inverse=True)
    cluster_of = cluster_of.ravel()
    return ClusterIndex(y, cluster_of, int(cluster_of.max()) + 1)


class ClusteredMean(NamedTuple):
    """A mean of trials with a standard error that allows correlation within a cluster."""

    mean: float
    se: float
    """Cluster-robust standard error, with statsmodels' default small-sample correction."""
    n: int
    """Values (trials)."""
    clusters: int
    """Distinct clusters (tasks)."""


def clustered_standard_error(
    values: Sequence[float] | npt.NDArray[np.float64],
    clusters: Sequence[Hashable] | npt.NDArray[np.generic],
) -> ClusteredMean:
    """Mean of ``values`` and its standard error with trials clustered by task.

    Equals statsmodels' ``OLS(values, ones).fit(cov_type="cluster",
    cov_kwds={"groups": clusters}).bse[0]`` with its defaults: the sandwich variance
    ``sum_g (sum_{i in g} (y_i - mean))^2 / n^2`` scaled by ``G / (G - 1) * (n - 1) / (n - k)``
    for ``G`` clusters and ``k = 1`` parameter, so the second factor is 1.

    Example::

        >>> r = clustered_standard_error([1.0, 2.0, 4.0, 5.0], ["a", "a", "b", "b"])
        >>> (r.mean, r.se, r.clusters)
        (3.0, 1.5, 2)

    Raises:
        ValueError: fewer than two clusters (the correction divides by ``G - 1``; with one
            cluster there is no between-task variation to estimate, and 0 or NaN would
            pass for a number), no values, mismatched lengths, or NaN/infinite values.
    """
    y, cluster_of, g = cluster_index(values, clusters)
    if g < 2:
        raise ValueError(
            "a clustered standard error needs at least two clusters (tasks); with one, "
            "report the mean without a standard error"
        )
    mean = float(y.mean())
    scores = np.bincount(cluster_of, weights=y - mean, minlength=g)
    n = int(y.size)
    variance = g / (g - 1) * float(scores @ scores) / n**2
    return ClusteredMean(mean, math.sqrt(variance), n, g)
