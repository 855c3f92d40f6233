"""Campaign-level statistics pinned against scipy, and their symmetry under swapped arms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest, permutation_test, ttest_1samp

from pairbench.analysis import (
    campaign_t_interval,
    scenario_grid,
    sign_flip_test,
    smallest_attainable_p,
)

VECTORS: list[list[float]] = [
    [1, 1, 1, 1, 1, 1],
    [1, 1, 1, 1, 1],
    [2, -1, 0, 1, 3, 0, 1],  # zeros and ties
    [0, 0, 0],
    [1, -1, 2, -2],  # observed sum 0
    [3, 3, -3, 1, 1, 0, 2, -1],
    [0.5, 1.5, -0.25, 2.0, 0.0, 1.0],
    [0.1, 0.2, 0.3, -0.6, 0.1, 0.2, 0.3],  # float ties that sum in another order
    [-4, -2, -2, 0, 1, -3, -1, -1, -2, 5, -1],
]


def _scipy_sign_flip_p(d: list[float]) -> float:
    result = permutation_test(
        (np.asarray(d, dtype=np.float64),),
        np.mean,
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=np.inf,
    )
    return float(result.pvalue)


@pytest.mark.parametrize("d", VECTORS)
def test_sign_flip_equals_scipy_exact_permutation_test(d: list[float]) -> None:
    result = sign_flip_test(d)
    assert result.p_value == pytest.approx(_scipy_sign_flip_p(d), rel=1e-12)
    assert result.mean == pytest.approx(float(np.mean(d)))
    assert result.assignments == 2 ** len(d)
    assert result.p_value == result.extreme / result.assignments


def test_smallest_attainable_p() -> None:
    assert smallest_attainable_p(5) == 0.0625
    assert smallest_attainable_p(6) == 0.03125
    assert smallest_attainable_p(1) == 1.0
    with pytest.raises(ValueError, match=">= 1"):
        smallest_attainable_p(0)


def test_six_pairs_all_favouring_one_arm_reach_the_floor_and_five_cannot() -> None:
    six = sign_flip_test([1, 1, 1, 1, 1, 1])
    assert six.p_value == 0.03125 == six.smallest_attainable_p
    five = sign_flip_test([1, 1, 1, 1, 1])
    assert five.p_value == 0.0625 == five.smallest_attainable_p
    assert five.p_value > 0.05  # so superiority at 5% needs N >= 6


def test_sign_flip_refuses_more_pairs_than_it_enumerates() -> None:
    assert sign_flip_test([1] * 20).p_value == 2 / 2**20
    with pytest.raises(ValueError, match=r"stops at N = 20 pairs \(got 21\)"):
        sign_flip_test([1] * 21)
    with pytest.raises(ValueError, match="at least 1 pair"):
        sign_flip_test([])
    with pytest.raises(ValueError, match="finite"):
        sign_flip_test([1.0, float("nan")])


@pytest.mark.parametrize("d", [v for v in VECTORS if np.std(v) > 0])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_t_interval_equals_scipy_ttest_1samp(d: list[float], confidence: float) -> None:
    result = campaign_t_interval(d, confidence)
    ttest = ttest_1samp(d, 0.0)
    interval = ttest.confidence_interval(confidence)
    assert result.low == pytest.approx(interval.low, rel=1e-12, abs=1e-12)
    assert result.high == pytest.approx(interval.high, rel=1e-12, abs=1e-12)
    assert result.mean == pytest.approx(float(np.mean(d)))
    assert result.sd == pytest.approx(float(np.std(d, ddof=1)))
    assert result.se == pytest.approx(float(np.std(d, ddof=1)) / np.sqrt(len(d)))
    assert result.df == ttest.df == len(d) - 1


def test_t_interval_with_no_spread_is_the_value_twice() -> None:
    result = campaign_t_interval([1, 1, 1, 1, 1, 1])
    assert (result.low, result.high, result.sd, result.se) == (1.0, 1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="at least 2 pair"):
        campaign_t_interval([3])
    with pytest.raises(ValueError, match="confidence"):
        campaign_t_interval([1, 2], confidence=1.0)


# Three scenarios × six pairs; None is unscored (scenario 2, pair 4 in the candidate).
BASELINE = [
    [True, True, False, True, False, True],
    [False, False, False, True, False, False],
    [True, True, True, True, True, True],
]
CANDIDATE = [
    [True, True, True, True, True, True],
    [True, False, True, True, True, False],
    [True, False, True, True, None, True],
]


def test_scenario_grid_counts() -> None:
    grid = scenario_grid(BASELINE, CANDIDATE, scenarios=["AR-001", "AR-002", "AR-003"])
    first, second, third = grid.rows
    assert first.scenario == "AR-001"
    assert (first.baseline_passed, first.baseline_scored) == (4, 6)
    assert (first.candidate_passed, first.candidate_scored) == (6, 6)
    assert (first.both, first.baseline_only, first.candidate_only, first.neither) == (4, 0, 2, 0)
    assert (second.baseline_only, second.candidate_only, second.unscored) == (0, 3, 0)
    assert (third.candidate_passed, third.candidate_scored, third.unscored) == (4, 5, 1)
    assert (third.both, third.baseline_only, third.candidate_only) == (4, 1, 0)
    assert (grid.baseline_only, grid.candidate_only) == (1, 5)
    assert (grid.favours_candidate, grid.favours_baseline, grid.tied) == (2, 1, 0)
    # Pair 4: the unscored AR-003 cell is left out of both arms.
    assert grid.pair_differences == (1, -1, 2, 0, 2, 0)
    assert grid.mcnemar_assumption == "treats cells as independent"


def test_scenario_grid_tests_equal_scipy_binomtest() -> None:
    grid = scenario_grid(BASELINE, CANDIDATE)
    assert grid.mcnemar_p == pytest.approx(binomtest(1, 6, 0.5).pvalue, rel=1e-12)
    assert grid.sign_test_p == pytest.approx(binomtest(1, 3, 0.5).pvalue, rel=1e-12)


@pytest.mark.parametrize(("b_only", "c_only"), [(0, 0), (0, 7), (3, 9), (5, 5), (12, 2)])
def test_scenario_grid_mcnemar_equals_binomtest_on_discordant_cells(
    b_only: int, c_only: int
) -> None:
    # One scenario, one pair per discordant cell: b_only baseline-only, then c_only
    # candidate-only, then two concordant pairs.
    base = [[True] * b_only + [False] * c_only + [True, False]]
    cand = [[False] * b_only + [True] * c_only + [True, False]]
    grid = scenario_grid(base, cand)
    expected = 1.0 if b_only + c_only == 0 else binomtest(b_only, b_only + c_only, 0.5).pvalue
    assert grid.mcnemar_p == pytest.approx(expected, rel=1e-12)
    assert (grid.baseline_only, grid.candidate_only) == (b_only, c_only)


def test_scenario_sign_test_drops_ties() -> None:
    # Scenario 0 favours the candidate, scenario 1 is a tie (one each way), 2 has none.
    base = [[False, False], [True, False], [True, True]]
    cand = [[True, True], [False, True], [True, True]]
    grid = scenario_grid(base, cand)
    assert (grid.favours_candidate, grid.favours_baseline, grid.tied) == (1, 0, 2)
    assert grid.sign_test_p == pytest.approx(binomtest(0, 1, 0.5).pvalue)


def test_scenario_grid_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="same scenarios × pairs grid"):
        scenario_grid([[True, False]], [[True]])
    with pytest.raises(ValueError, match="scenario 0, pair 1 is 'passed'"):
        scenario_grid([[True, "passed"]], [[True, True]])
    with pytest.raises(ValueError, match="2 scenario names for 1 grid rows"):
        scenario_grid([[True]], [[True]], scenarios=["a", "b"])


differences = st.lists(st.integers(min_value=-10, max_value=10), min_size=2, max_size=10)


@given(differences)
def test_swapping_arms_negates_the_mean_and_keeps_the_p_value(d: list[int]) -> None:
    forward, swapped = sign_flip_test(d), sign_flip_test([-x for x in d])
    assert swapped.mean == -forward.mean
    assert swapped.p_value == forward.p_value
    assert 0.0 < forward.p_value <= 1.0
    there, back = campaign_t_interval(d), campaign_t_interval([-x for x in d])
    assert back.mean == -there.mean
    assert back.low == pytest.approx(-there.high)
    assert back.high == pytest.approx(-there.low)


cells = st.sampled_from([True, False, None])


@given(
    st.integers(min_value=1, max_value=4).flatmap(
        lambda s: st.integers(min_value=1, max_value=6).flatmap(
            lambda n: st.tuples(
                st.lists(st.lists(cells, min_size=n, max_size=n), min_size=s, max_size=s),
                st.lists(st.lists(cells, min_size=n, max_size=n), min_size=s, max_size=s),
            )
        )
    )
)
def test_swapping_arms_in_the_grid_swaps_counts_and_keeps_p_values(
    arms: tuple[list[list[bool | None]], list[list[bool | None]]],
) -> None:
    base, cand = arms
    forward, swapped = scenario_grid(base, cand), scenario_grid(cand, base)
    assert swapped.pair_differences == tuple(-x for x in forward.pair_differences)
    assert (swapped.baseline_only, swapped.candidate_only) == (
        forward.candidate_only,
        forward.baseline_only,
    )
    assert (swapped.favours_baseline, swapped.favours_candidate) == (
        forward.favours_candidate,
        forward.favours_baseline,
    )
    assert swapped.mcnemar_p == forward.mcnemar_p
    assert swapped.sign_test_p == forward.sign_test_p
    assert 0.0 <= forward.mcnemar_p <= 1.0
