import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from pairbench.analysis._multiplicity import holm


def test_matches_statsmodels_on_random_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    # multipletests runs gc.collect() on every call (statsmodels housekeeping, no effect
    # on the result), which costs tens of milliseconds in a loaded pytest process.
    monkeypatch.setattr("gc.collect", lambda *args: 0)
    rng = np.random.default_rng(1979)
    for _ in range(1000):
        m = int(rng.integers(1, 25))
        p = rng.uniform(size=m) ** float(rng.uniform(0.2, 3.0))
        # Ties, exact zeros and ones are where step-down bookkeeping goes wrong.
        if rng.uniform() < 0.3:
            p = np.round(p, 1)
        expected = multipletests(p, method="holm")[1]
        assert holm(p.tolist()) == pytest.approx(expected.tolist(), abs=1e-12)


def test_hand_computed() -> None:
    # Sorted 0.01, 0.03, 0.04 -> 3*0.01, 2*0.03, max(0.06, 1*0.04); back in input order.
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    assert holm([0.6, 0.7]) == [1.0, 1.0]


def test_empty() -> None:
    assert holm([]) == []


def test_input_order_kept_and_bounds() -> None:
    p = [0.2, 0.001, 0.04, 0.5, 0.01]
    adjusted = holm(p)
    assert all(raw <= adj <= 1.0 for raw, adj in zip(p, adjusted, strict=True))
    assert adjusted[1] == pytest.approx(0.005)


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan])
def test_invalid_p_raises(bad: float) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.1, bad])
