import doctest
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import bootstrap

import pairbench.analysis._bootstrap
from pairbench.analysis._bootstrap import Statistic, cluster_bootstrap, cluster_bootstrap_paired


def test_doctests() -> None:
    assert doctest.testmod(pairbench.analysis._bootstrap).failed == 0


def _clustered_data(seed: int, tasks: int = 40, per_task: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    effects = rng.normal(0, 2, size=tasks)
    clusters = np.repeat(np.arange(tasks), per_task)
    return effects[clusters] + rng.normal(0, 1, size=clusters.size), clusters


def test_same_seed_same_interval_and_records_it() -> None:
    x, c = _clustered_data(0)
    for statistic in ("mean", "median", np.mean, np.median, np.std):
        first = cluster_bootstrap(x, c, statistic, 300, seed=11)
        assert first == cluster_bootstrap(x, c, statistic, 300, seed=11)
        assert (first.seed, first.reps, first.clusters, first.n) == (11, 300, 40, 200)
    assert cluster_bootstrap(x, c, seed=11) != cluster_bootstrap(x, c, seed=12)


def test_two_seeds_at_10000_reps_agree_within_2_percent_of_width() -> None:
    # Monte Carlo error of a 2.5% quantile at 10,000 reps is about 1% of a normal
    # interval's width, so two seeds' limits differ by about 1.4% of it: the issue's 2%
    # bound is roughly two standard errors, checked here for one fixed pair of seeds.
    x, c = _clustered_data(1)
    for statistic in ("mean", "median"):
        one = cluster_bootstrap(x, c, statistic, 10_000, seed=1)
        two = cluster_bootstrap(x, c, statistic, 10_000, seed=2)
        width = one.high - one.low
        assert abs(one.low - two.low) <= 0.02 * width
        assert abs(one.high - two.high) <= 0.02 * width


def test_fast_paths_match_expanding_each_resample() -> None:
    # The vectorised mean and median equal calling the statistic on the expanded
    # resample, because all three paths share the same seeded cluster draws.
    x, c = _clustered_data(2, tasks=15, per_task=3)
    x = np.round(x, 1)  # ties exercise the median's middle positions
    paths: list[tuple[Statistic, Statistic]] = [
        ("mean", lambda v: float(np.mean(v))),
        ("median", lambda v: float(np.median(v))),
    ]
    for fast, slow in paths:
        a = cluster_bootstrap(x, c, fast, 500, seed=3)
        b = cluster_bootstrap(x, c, slow, 500, seed=3)
        assert (a.estimate, a.low, a.high) == pytest.approx((b.estimate, b.low, b.high), abs=1e-12)


def test_one_trial_per_cluster_approximates_ordinary_bootstrap() -> None:
    rng = np.random.default_rng(4)
    x = rng.lognormal(0, 0.6, size=300)
    ours = cluster_bootstrap(x, np.arange(x.size), "mean", 10_000, seed=5)
    ref = bootstrap(
        (x,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(6)
    ).confidence_interval
    width = ref.high - ref.low
    assert abs(ours.low - ref.low) <= 0.03 * width
    assert abs(ours.high - ref.high) <= 0.03 * width


def test_clustering_widens_the_interval_when_tasks_differ() -> None:
    x, c = _clustered_data(7)
    clustered = cluster_bootstrap(x, c, seed=1)
    naive = cluster_bootstrap(x, np.arange(x.size), seed=1)
    assert clustered.high - clustered.low > 1.5 * (naive.high - naive.low)


def test_paired_resamples_differences_by_task() -> None:
    a, c = _clustered_data(8)
    b = a - 0.5 + np.random.default_rng(9).normal(0, 0.1, size=a.size)
    r = cluster_bootstrap_paired(a, b, c, "median", 1000, seed=2)
    unpaired = cluster_bootstrap(a - b, c, "median", 1000, seed=2)
    assert r._replace(method="") == unpaired._replace(method="")
    assert "median of paired differences" in r.method
    assert r.low <= r.estimate <= r.high and r.estimate == pytest.approx(0.5, abs=0.05)
    with pytest.raises(ValueError, match="one per trial"):
        cluster_bootstrap_paired(a, b[:-1], c, seed=1)


def test_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="at least two clusters"):
        cluster_bootstrap([1.0, 2.0, 3.0], ["t", "t", "t"], seed=1)
    with pytest.raises(ValueError, match="one cluster label per value"):
        cluster_bootstrap([1.0, 2.0], ["t"], seed=1)
    with pytest.raises(ValueError, match="no values"):
        cluster_bootstrap([], [], seed=1)
    with pytest.raises(ValueError, match="NaN"):
        cluster_bootstrap([1.0, float("nan")], ["a", "b"], seed=1)
    with pytest.raises(ValueError, match="reps"):
        cluster_bootstrap([1.0, 2.0], ["a", "b"], reps=0, seed=1)
    with pytest.raises(ValueError, match="statistic"):
        cluster_bootstrap([1.0, 2.0], ["a", "b"], "mode", seed=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        cluster_bootstrap([1.0, 2.0], ["a", "b"], "mean", 10, 3)  # type: ignore[call-arg]


def test_large_mean_is_fast() -> None:
    rng = np.random.default_rng(10)
    clusters = rng.integers(0, 5_000, size=1_000_000)
    values = rng.normal(size=clusters.size)
    start = time.perf_counter()
    r = cluster_bootstrap(values, clusters, "mean", 2000, seed=1)
    assert time.perf_counter() - start < 10.0
    assert r.clusters == 5_000 and r.low < r.estimate < r.high


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 8), st.floats(-1e3, 1e3, allow_nan=False, width=32)),
        min_size=2,
        max_size=60,
    ).filter(lambda rows: len({k for k, _ in rows}) >= 2),
    st.integers(0, 2**32 - 1),
)
def test_interval_contains_mean_estimate(rows: list[tuple[int, float]], seed: int) -> None:
    clusters = [k for k, _ in rows]
    values = [v for _, v in rows]
    r = cluster_bootstrap(values, clusters, "mean", 400, seed=seed)
    slack = 1e-9 * max(1.0, abs(r.estimate))
    assert r.low - slack <= r.estimate <= r.high + slack
    assert r == cluster_bootstrap(values, clusters, "mean", 400, seed=seed)
