import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from pairbench.analysis import wilson


@pytest.mark.parametrize(
    ("k", "n", "confidence"),
    [
        (0, 1, 0.95),
        (1, 1, 0.95),
        (0, 10, 0.95),
        (10, 10, 0.95),
        (7, 10, 0.95),
        (3, 81, 0.95),
        (40, 81, 0.9),
        (1, 2, 0.99),
        (123, 1000, 0.95),
        (5, 6, 0.5),
    ],
)
def test_matches_statsmodels(k: int, n: int, confidence: float) -> None:
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    p = wilson(k, n, confidence)
    assert (p.k, p.n) == (k, n)
    assert p.estimate == pytest.approx(k / n)
    assert p.low == pytest.approx(low, abs=1e-12)
    assert p.high == pytest.approx(high, abs=1e-12)


def test_reference_numbers() -> None:
    # 7/10: the textbook Wilson 95% interval is 0.3968 to 0.8922.
    p = wilson(7, 10)
    assert round(p.low, 4) == 0.3968
    assert round(p.high, 4) == 0.8922


def test_extremes_touch_bounds() -> None:
    assert wilson(0, 5).low == 0.0
    assert wilson(5, 5).high == 1.0
    assert wilson(0, 5).high > 0.0
    assert wilson(5, 5).low < 1.0


def test_n_zero_raises_clear_message() -> None:
    with pytest.raises(ValueError, match=r"n > 0.*n/a"):
        wilson(0, 0)


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5), (1, -1)])
def test_bad_counts_raise(k: int, n: int) -> None:
    with pytest.raises(ValueError):
        wilson(k, n)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_bad_confidence_raises(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        wilson(1, 2, confidence)


@given(
    st.integers(min_value=1, max_value=5000).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    )
)
def test_interval_is_ordered_and_finite(kn: tuple[int, int]) -> None:
    k, n = kn
    p = wilson(k, n)
    assert 0.0 <= p.low <= p.estimate <= p.high <= 1.0
    assert all(math.isfinite(v) for v in (p.low, p.high))
    # Symmetry: failures' interval mirrors successes'.
    q = wilson(n - k, n)
    assert q.low == pytest.approx(1 - p.high, abs=1e-12)
