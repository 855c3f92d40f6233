import functools
import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from pairbench.analysis._newcombe import (
    PairedProportionDifference,
    paired_proportion_difference,
    phi_correlation,
)


# Newcombe (Statistics in Medicine 1998;17:2635-2650), Table II, method 10: the
# examples printed in the paper, as (both, a_only, b_only, neither) -> (low, high).
@pytest.mark.parametrize(
    ("table", "low", "high"),
    [
        ((36, 12, 2, 0), 0.0569, 0.3404),
        ((18, 12, 2, 18), 0.0562, 0.3290),
        ((53, 0, 0, 1), -0.0729, 0.0729),
        ((0, 30, 0, 0), 0.8395, 1.0),
    ],
)
def test_newcombe_printed_examples(
    table: tuple[int, int, int, int], low: float, high: float
) -> None:
    _, a_only, b_only, _ = table
    r = paired_proportion_difference(*table)
    assert r.difference == pytest.approx((a_only - b_only) / sum(table), abs=1e-12)
    assert r.low == pytest.approx(low, abs=1e-4)
    assert r.high == pytest.approx(high, abs=1e-4)
    assert r.n == sum(table)


def test_worked_example_in_full() -> None:
    r = paired_proportion_difference(36, 12, 2, 0)
    assert isinstance(r, PairedProportionDifference)
    assert round(r.difference, 4) == 0.2000
    assert (round(r.low, 4), round(r.high, 4)) == (0.0569, 0.3404)
    # ad - bc = 0 - 24 is negative, so the adjusted phi keeps it unshrunk.
    assert r.phi == pytest.approx(-24 / math.sqrt(48 * 2 * 38 * 12), abs=1e-15)
    assert "method-10" in r.method


@functools.cache
def _wilson_reference(k: int, n: int, confidence: float) -> tuple[float, float]:
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return float(low), float(high)


def _reference(a: int, b: int, c: int, d: int, confidence: float) -> tuple[float, float, float]:
    """Newcombe's method 10 from the paper's formulas, with statsmodels' Wilson."""
    n = a + b + c + d
    l1, u1 = _wilson_reference(a + b, n, confidence)
    l2, u2 = _wilson_reference(a + c, n, confidence)
    p1, p2 = (a + b) / n, (a + c) / n
    ad_bc = a * d - b * c
    product = (a + b) * (c + d) * (a + c) * (b + d)
    if product == 0:
        phi = 0.0
    elif ad_bc > n / 2:
        phi = (ad_bc - n / 2) / math.sqrt(product)
    elif ad_bc >= 0:
        phi = 0.0
    else:
        phi = ad_bc / math.sqrt(product)
    theta = p1 - p2
    dl = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    du = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    return theta, theta - math.sqrt(max(dl, 0.0)), theta + math.sqrt(max(du, 0.0))


def _tables() -> list[tuple[int, int, int, int]]:
    # Every table with 1..8 pairs, plus random larger ones.
    small = [
        (a, b, c, n - a - b - c)
        for n in range(1, 9)
        for a in range(n + 1)
        for b in range(n + 1 - a)
        for c in range(n + 1 - a - b)
    ]
    rng = np.random.default_rng(19980915)
    large = []
    for _ in range(100):
        a, b, c, d = rng.multinomial(int(rng.integers(9, 400)), rng.dirichlet([1] * 4))
        large.append((int(a), int(b), int(c), int(d)))
    return small + large


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_matches_independent_reimplementation(confidence: float) -> None:
    for table in _tables():
        theta, low, high = _reference(*table, confidence)
        r = paired_proportion_difference(*table, confidence=confidence)
        assert r.difference == pytest.approx(theta, abs=1e-12), table
        assert r.low == pytest.approx(low, abs=1e-9), table
        assert r.high == pytest.approx(high, abs=1e-9), table


def test_adjusted_phi_rules() -> None:
    # ad - bc = 10*10 - 0 = 100 > n/2 = 10: the numerator shrinks by n/2.
    assert paired_proportion_difference(10, 0, 0, 10).phi == pytest.approx(90 / 100)
    # 0 <= ad - bc <= n/2: the adjusted numerator floors at 0.
    assert paired_proportion_difference(3, 2, 2, 2).phi == 0.0
    # A zero margin (arm A passed everything) gives phi = 0.
    assert paired_proportion_difference(7, 3, 0, 0).phi == 0.0


def test_phi_correlation_matches_pearson_on_the_trials() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        a, b, c, d = (int(x) for x in rng.integers(0, 15, size=4))
        x = np.array([1] * a + [1] * b + [0] * c + [0] * d)
        y = np.array([1] * a + [0] * b + [1] * c + [0] * d)
        if x.std() == 0 or y.std() == 0:
            assert phi_correlation(a, b, c, d) == 0.0
        else:
            expected = float(np.corrcoef(x, y)[0, 1])
            assert phi_correlation(a, b, c, d) == pytest.approx(expected, abs=1e-12)


def test_phi_correlation_is_unadjusted() -> None:
    assert phi_correlation(10, 0, 0, 10) == pytest.approx(1.0)
    assert phi_correlation(0, 10, 10, 0) == pytest.approx(-1.0)
    assert phi_correlation(30, 0, 0, 0) == 0.0


def test_one_arm_passes_everything() -> None:
    r = paired_proportion_difference(20, 5, 0, 0)
    assert r.phi == 0.0
    assert r.difference == pytest.approx(0.2)
    assert -1.0 <= r.low <= r.difference <= r.high <= 1.0


def test_n_zero_raises_clear_message() -> None:
    with pytest.raises(ValueError, match=r"at least one pair \(n > 0\)"):
        paired_proportion_difference(0, 0, 0, 0)


@pytest.mark.parametrize("table", [(-1, 2, 3, 4), (1, 2.5, 3, 4), (True, 1, 1, 1)])
def test_bad_counts_raise(table: tuple[int, int, int, int]) -> None:
    with pytest.raises(ValueError, match="non-negative whole number"):
        paired_proportion_difference(*table)
    with pytest.raises(ValueError, match="non-negative whole number"):
        phi_correlation(*table)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.2])
def test_bad_confidence_raises(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        paired_proportion_difference(1, 2, 3, 4, confidence=confidence)
