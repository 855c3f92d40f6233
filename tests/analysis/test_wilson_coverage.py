import pytest
from scipy.stats import binom

from pairbench.analysis import wilson


def _coverage(n: int, p: float) -> float:
    # Exact coverage: the probability of drawing a k whose interval contains p.
    covered = [k for k in range(n + 1) if wilson(k, n).low <= p <= wilson(k, n).high]
    return float(sum(binom.pmf(k, n, p) for k in covered))


def test_wilson_coverage_n20_p01() -> None:
    # The published exact coverage of the 95% Wilson interval at n = 20, p = 0.1.
    assert _coverage(20, 0.1) == pytest.approx(0.9568, abs=1e-4)


def test_coverage_near_nominal_in_the_middle() -> None:
    assert 0.93 <= _coverage(50, 0.5) <= 0.97
