import math

import numpy as np
import pytest
from scipy.stats import binom, norm

from pairbench.analysis import mcnemar_exact
from pairbench.analysis._power import (
    PowerRow,
    mcnemar_power,
    mcnemar_sample_size,
    power_table,
)


def _connor_by_hand(p_disc: float, psi: float, alpha: float, power: float) -> int:
    # Connor (Biometrics 1987;43:207-211), written with the smaller discordant
    # probability p01 and psi >= 1, as in Machin et al.'s sample-size tables.
    psi = max(psi, 1 / psi)
    p01 = p_disc / (1 + psi)
    za, zb = float(norm.ppf(1 - alpha / 2)), float(norm.ppf(power))
    n = (za * math.sqrt(psi + 1) + zb * math.sqrt((psi + 1) - p01 * (psi - 1) ** 2)) ** 2 / (
        p01 * (psi - 1) ** 2
    )
    return math.ceil(n)


@pytest.mark.parametrize("p_disc", [0.05, 0.1, 0.2, 0.35, 0.6, 1.0])
@pytest.mark.parametrize("ratio", [0.25, 0.5, 1.5, 2.0, 3.0, 5.0])
@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)])
def test_connor_formula_by_hand(p_disc: float, ratio: float, alpha: float, power: float) -> None:
    assert mcnemar_sample_size(p_disc, ratio, alpha, power) == _connor_by_hand(
        p_disc, ratio, alpha, power
    )


def test_ratio_and_its_inverse_need_the_same_pairs() -> None:
    assert mcnemar_sample_size(0.2, 2.0) == mcnemar_sample_size(0.2, 0.5)


def test_sample_size_monotone() -> None:
    powers = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
    sizes = [mcnemar_sample_size(0.2, 2.0, power=p) for p in powers]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    discordance = [0.05, 0.1, 0.2, 0.4, 0.8]
    sizes = [mcnemar_sample_size(p, 2.0) for p in discordance]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    # Larger |log ratio| means a larger effect, on either side of 1.
    for ratios in ([1.2, 1.5, 2.0, 3.0, 6.0], [1 / 1.2, 1 / 1.5, 0.5, 1 / 3, 1 / 6]):
        sizes = [mcnemar_sample_size(0.2, r) for r in ratios]
        assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)


def test_one_sided_discordance_is_allowed() -> None:
    # ratio = inf: B never wins a discordant pair; Connor's delta is then p_discordant.
    za, zb = float(norm.ppf(0.975)), float(norm.ppf(0.8))
    expected = math.ceil((za * math.sqrt(0.2) + zb * math.sqrt(0.2 - 0.04)) ** 2 / 0.04)
    assert mcnemar_sample_size(0.2, math.inf) == mcnemar_sample_size(0.2, 0.0) == expected
    assert mcnemar_power(30, 0.2, math.inf) == pytest.approx(
        _brute_force_power(30, 0.2, 1e300, 0.05)
    )


def _brute_force_power(n: int, p_disc: float, ratio: float, alpha: float) -> float:
    # Sum the trinomial over every (a_only, b_only) table and ask mcnemar_exact itself.
    p10 = p_disc * ratio / (1 + ratio)
    p01 = p_disc / (1 + ratio)
    total = 0.0
    for x in range(n + 1):
        for y in range(n + 1 - x):
            if mcnemar_exact(x, y) <= alpha:
                ways = math.comb(n, x) * math.comb(n - x, y)
                total += ways * p10**x * p01**y * (1 - p_disc) ** (n - x - y)
    return total


@pytest.mark.parametrize(
    ("n", "p_disc", "ratio", "alpha"),
    [
        (1, 0.5, 2.0, 0.05),
        (12, 0.5, 4.0, 0.05),
        (25, 0.3, 3.0, 0.05),
        (30, 0.8, 0.4, 0.1),
        (20, 1.0, 2.5, 0.01),
        (18, 0.4, 1.0, 0.05),
    ],
)
def test_exact_power_matches_brute_force(n: int, p_disc: float, ratio: float, alpha: float) -> None:
    expected = _brute_force_power(n, p_disc, ratio, alpha)
    assert mcnemar_power(n, p_disc, ratio, alpha) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("n", "p_disc", "ratio", "seed"),
    [(60, 0.3, 3.0, 11), (150, 0.2, 2.0, 12), (40, 0.5, 0.4, 13)],
)
def test_exact_power_against_seeded_simulation(
    n: int, p_disc: float, ratio: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    p10, p01 = p_disc * ratio / (1 + ratio), p_disc / (1 + ratio)
    tables = rng.multinomial(n, [p10, p01, 1 - p_disc], size=20_000)
    x, y = tables[:, 0], tables[:, 1]
    m = x + y
    # The exact McNemar p value, vectorised: 2 * P(Bin(m, 1/2) <= min(x, y)), 1 if m = 0.
    p = np.where(m == 0, 1.0, np.minimum(1.0, 2 * binom.cdf(np.minimum(x, y), m, 0.5)))
    simulated = float(np.mean(p <= 0.05))
    assert mcnemar_power(n, p_disc, ratio) == pytest.approx(simulated, abs=0.02)


def test_power_edges() -> None:
    assert mcnemar_power(0, 0.3, 2.0) == 0.0
    # No effect: the exact test's size, at most alpha.
    assert 0.0 < mcnemar_power(200, 0.3, 1.0) <= 0.05
    assert mcnemar_power(2000, 0.3, 3.0) == pytest.approx(1.0, abs=1e-9)


def test_power_increases_towards_target_at_connor_size() -> None:
    n = mcnemar_sample_size(0.2, 2.0)
    assert mcnemar_power(n // 4, 0.2, 2.0) < mcnemar_power(n, 0.2, 2.0)
    # Connor's normal approximation lands near the target for the conservative exact test.
    assert mcnemar_power(n, 0.2, 2.0) == pytest.approx(0.8, abs=0.05)


def test_power_table_rows() -> None:
    rows = power_table([0.1, 0.3], [2.0, 3.0], alpha=0.05, power=0.9)
    assert [(r.p_discordant, r.ratio) for r in rows] == [
        (0.1, 2.0),
        (0.1, 3.0),
        (0.3, 2.0),
        (0.3, 3.0),
    ]
    for row in rows:
        assert isinstance(row, PowerRow)
        assert row.pairs == mcnemar_sample_size(row.p_discordant, row.ratio, 0.05, 0.9)
        assert row.exact_power == mcnemar_power(row.pairs, row.p_discordant, row.ratio, 0.05)
        assert (row.alpha, row.target_power) == (0.05, 0.9)


@pytest.mark.parametrize(
    ("p_disc", "ratio", "alpha", "power", "match"),
    [
        (0.2, 1.0, 0.05, 0.8, "ratio = 1"),
        (0.0, 2.0, 0.05, 0.8, "p_discordant"),
        (1.2, 2.0, 0.05, 0.8, "p_discordant"),
        (0.2, math.nan, 0.05, 0.8, "ratio"),
        (0.2, -2.0, 0.05, 0.8, "ratio"),
        (0.2, 2.0, 0.0, 0.8, "alpha"),
        (0.2, 2.0, 0.05, 1.0, "power"),
    ],
)
def test_bad_inputs_raise(
    p_disc: float, ratio: float, alpha: float, power: float, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        mcnemar_sample_size(p_disc, ratio, alpha, power)


def test_bad_pairs_raise() -> None:
    with pytest.raises(ValueError, match="n_pairs"):
        mcnemar_power(-1, 0.2, 2.0)
