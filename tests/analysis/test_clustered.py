import doctest

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st

import pairbench.analysis._clustered
from pairbench.analysis._clustered import ClusteredMean, clustered_standard_error


def test_doctests() -> None:
    assert doctest.testmod(pairbench.analysis._clustered).failed == 0


def _statsmodels_se(values: np.ndarray, clusters: np.ndarray) -> float:
    fit = sm.OLS(values, np.ones(len(values))).fit(
        cov_type="cluster", cov_kwds={"groups": clusters}
    )
    return float(fit.bse[0])


@pytest.mark.parametrize("seed", range(12))
def test_matches_statsmodels_cluster_ols(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tasks = int(rng.integers(2, 60))
    sizes = rng.integers(1, 8, size=tasks)  # unbalanced clusters
    clusters = np.repeat(np.arange(tasks), sizes)
    values = rng.normal(0, 3, size=tasks)[clusters] + rng.lognormal(0, 1, size=clusters.size)
    rng.shuffle(perm := np.arange(clusters.size))  # trials need not be grouped in order
    values, clusters = values[perm], clusters[perm]
    got = clustered_standard_error(values, [f"task-{k}" for k in clusters])
    assert isinstance(got, ClusteredMean)
    assert got.mean == pytest.approx(values.mean(), abs=1e-12)
    assert got.se == pytest.approx(_statsmodels_se(values, clusters), abs=1e-9, rel=1e-9)
    assert (got.n, got.clusters) == (clusters.size, tasks)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.floats(-1e3, 1e3, allow_nan=False, width=32)),
        min_size=2,
        max_size=40,
    ).filter(lambda rows: len({k for k, _ in rows}) >= 2)
)
def test_matches_statsmodels_on_arbitrary_data(rows: list[tuple[int, float]]) -> None:
    clusters = np.array([k for k, _ in rows])
    values = np.array([v for _, v in rows])
    got = clustered_standard_error(values, clusters)
    assert got.se == pytest.approx(_statsmodels_se(values, clusters), abs=1e-9, rel=1e-9)


def test_one_cluster_is_an_error_not_zero_or_nan() -> None:
    with pytest.raises(ValueError, match="at least two clusters"):
        clustered_standard_error([1.0, 2.0, 3.0], ["t", "t", "t"])
    with pytest.raises(ValueError, match="no values"):
        clustered_standard_error([], [])
    with pytest.raises(ValueError, match="one cluster label per value"):
        clustered_standard_error([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="NaN"):
        clustered_standard_error([1.0, float("inf")], ["a", "b"])
