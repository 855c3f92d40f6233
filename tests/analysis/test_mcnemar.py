import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from pairbench.analysis import mcnemar_exact


@pytest.mark.parametrize(
    ("a_only", "b_only"),
    [(0, 1), (1, 0), (1, 9), (9, 1), (5, 5), (0, 12), (3, 4), (20, 41), (100, 130), (0, 1000)],
)
def test_matches_scipy_binomtest(a_only: int, b_only: int) -> None:
    n = a_only + b_only
    expected = binomtest(min(a_only, b_only), n, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_reference_number() -> None:
    # 1 vs 9 discordant pairs: 2 * (1 + 10) / 1024.
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024)


def test_no_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


def test_negative_count_raises() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 3)


@given(st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=400))
def test_p_in_unit_interval_and_symmetric(a_only: int, b_only: int) -> None:
    p = mcnemar_exact(a_only, b_only)
    assert 0.0 <= p <= 1.0
    assert p == mcnemar_exact(b_only, a_only)
