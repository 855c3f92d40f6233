"""Seeded cluster bootstrap: percentile intervals that resample whole tasks."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from pairbench.analysis._clustered import cluster_index
from pairbench.analysis._wilson import _check_confidence

_Floats = npt.NDArray[np.float64]
_Ints = npt.NDArray[np.int64]
Statistic = Literal["mean", "median"] | Callable[[_Floats], float]
"""``"mean"``, ``"median"`` (fast, vectorised) or any callable from values to a number."""

# Bounds memory: a chunk's multiplicity matrix is CHUNK x clusters integers.
_CHUNK = 256


class BootstrapInterval(NamedTuple):
    """A statistic with a seeded percentile interval from resampling clusters."""

    estimate: float
    """The statistic on the data as given."""
    low: float
    high: float
    reps: int
    """Bootstrap resamples drawn."""
    seed: int
    """Seed of ``numpy.random.default_rng``: the same seed gives the same interval."""
    clusters: int
    """Distinct clusters (tasks) resampled."""
    method: str
    n: int
    """Values (trials) given."""
    confidence: float


def _resolve(statistic: Statistic) -> tuple[str, Callable[[_Floats], float] | None]:
    if statistic is np.mean or statistic == "mean":
        return "mean", None
    if statistic is np.median or statistic == "median":
        return "median", None
    if isinstance(statistic, str) or not callable(statistic):
        raise ValueError(f"statistic must be 'mean', 'median' or a callable, got {statistic!r}")
    return getattr(statistic, "__name__", "statistic"), statistic


def _multiplicities(rng: np.random.Generator, k: int, reps: int) -> Iterator[_Ints]:
    """Chunks of a (reps, k) matrix: how often each cluster is drawn in each resample."""
    for start in range(0, reps, _CHUNK):
        rows = min(_CHUNK, reps - start)
        drawn = rng.integers(0, k, size=(rows, k))
        offsets = (np.arange(rows) * k)[:, None]
        yield np.bincount((drawn + offsets).ravel(), minlength=rows * k).reshape(rows, k)


def _weighted_medians(sorted_values: _Floats, cluster_of: _Ints, mult: _Ints) -> _Floats:
    """Per resample (row of ``mult``), the median of ``sorted_values`` with each value
    repeated as often as its cluster was drawn."""
    out = np.empty(len(mult))
    for r, row in enumerate(mult):
        # One row at a time keeps memory at one weight per value. The median of the
        # expanded sample sits at 0-based positions (total-1)//2 and total//2;
        # searchsorted on the running counts finds the value holding each.
        cum = np.cumsum(row[cluster_of])
        total = int(cum[-1])
        lo, hi = np.searchsorted(cum, [(total - 1) // 2, total // 2], side="right")
        out[r] = (sorted_values[lo] + sorted_values[hi]) / 2.0
    return out


def cluster_bootstrap(
    values: Sequence[float] | _Floats,
    clusters: Sequence[Hashable] | npt.NDArray[np.generic],
    statistic: Statistic = "mean",
    reps: int = 2000,
    *,
    seed: int,
    confidence: float = 0.95,
) -> BootstrapInterval:
    """Percentile interval for ``statistic`` that resamples whole clusters (tasks).

    Trials of one task are not independent, so each resample draws as many clusters as
    there are, with replacement, and keeps every trial of each drawn cluster. Draws come
    from ``numpy.random.default_rng(seed)`` only, so the interval is reproducible.

    Fast paths (2,000 resamples of 1,000,000 values in 5,000 clusters: about 0.3 s for the
    mean, about 9 s for the median): each resample is a vector of cluster multiplicities (a
    bincount of the drawn cluster indices). The mean of a resample is then the multiplicity-
    weighted sum of per-cluster sums over the weighted sum of per-cluster counts (one matrix
    product per chunk of resamples); the median is read off running multiplicity counts over
    the values sorted once. Any other callable gets the expanded resample and is called once
    per resample, which is slower. The interval is the (alpha/2, 1 - alpha/2) quantiles of
    the resampled statistics (numpy's default linear interpolation).

    Example::

        >>> r = cluster_bootstrap([1.0, 2.0, 2.0, 3.0, 5.0, 4.0], ["t1", "t1", "t2", "t2",
        ...     "t3", "t3"], seed=7)
        >>> (r.estimate, r.clusters, r.reps, r.low <= r.estimate <= r.high)
        (2.8333333333333335, 3, 2000, True)

    Raises:
        ValueError: fewer than two clusters (resampling one cluster gives no spread),
            mismatched lengths, no values, NaN or infinity, ``reps < 1``, ``confidence``
            outside (0, 1), or an unknown ``statistic``.
    """
    return _bootstrap(values, clusters, statistic, reps, seed, confidence, "values")


def cluster_bootstrap_paired(
    a: Sequence[float] | _Floats,
    b: Sequence[float] | _Floats,
    clusters: Sequence[Hashable] | npt.NDArray[np.generic],
    statistic: Statistic = "mean",
    reps: int = 2000,
    *,
    seed: int,
    confidence: float = 0.95,
) -> BootstrapInterval:
    """Cluster-bootstrap interval for the mean (or median) of paired differences ``a - b``.

    Pairs stay together: each resample keeps both arms of every trial of a drawn task.

    Example::

        >>> r = cluster_bootstrap_paired([5.0, 6, 7, 9], [4.0, 4, 6, 5], ["x", "x", "y", "y"],
        ...     seed=1)
        >>> (r.estimate, r.low, r.high)
        (2.0, 1.5, 2.5)

    Raises:
        ValueError: as :func:`cluster_bootstrap`, and when ``a`` and ``b`` differ in length.
    """
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if xa.shape != xb.shape:
        raise ValueError(f"paired values need one per trial in each arm: {xa.size} vs {xb.size}")
    return _bootstrap(xa - xb, clusters, statistic, reps, seed, confidence, "paired differences")


def _bootstrap(
    values: Sequence[float] | _Floats,
    clusters: Sequence[Hashable] | npt.NDArray[np.generic],
    statistic: Statistic,
    reps: int,
    seed: int,
    confidence: float,
    what: str,
) -> BootstrapInterval:
    _check_confidence(confidence)
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    name, func = _resolve(statistic)
    x, cluster_of, k = cluster_index(values, clusters)
    if k < 2:
        raise ValueError(
            "a cluster bootstrap needs at least two clusters (tasks): resampling a single "
            "cluster always returns the same data, so it has no interval"
        )
    rng = np.random.default_rng(seed)
    chunks: list[_Floats] = []
    if name == "mean":
        sums = np.bincount(cluster_of, weights=x, minlength=k)
        counts = np.bincount(cluster_of, minlength=k).astype(np.float64)
        estimate = float(x.mean())
        for m in _multiplicities(rng, k, reps):
            chunks.append((m @ sums) / (m @ counts))
    elif name == "median":
        order = np.argsort(x, kind="stable")
        sorted_x, sorted_cluster = x[order], cluster_of[order]
        estimate = float(np.median(x))
        for m in _multiplicities(rng, k, reps):
            chunks.append(_weighted_medians(sorted_x, sorted_cluster, m))
    else:
        assert func is not None
        estimate = float(func(x))
        for m in _multiplicities(rng, k, reps):
            chunks.append(np.array([float(func(np.repeat(x, row[cluster_of]))) for row in m]))
    stats = np.concatenate(chunks)
    alpha = 1.0 - confidence
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    method = (
        f"{name} of {what}; {confidence:.0%} percentile interval from {reps} cluster-bootstrap "
        f"resamples of {k} clusters (whole clusters drawn with replacement), "
        f"numpy default_rng({seed})"
    )
    return BootstrapInterval(
        estimate, float(low), float(high), reps, seed, k, method, int(x.size), confidence
    )
