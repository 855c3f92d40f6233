import doctest
import itertools
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairbench.analysis._hodges_lehmann
from helpers.common import skip_outside_ci
from pairbench.analysis._hodges_lehmann import HodgesLehmann, hodges_lehmann

pytestmark = pytest.mark.r

R_SCRIPT = Path(__file__).parent / "r" / "wilcox_hl.R"


def test_doctests() -> None:
    assert doctest.testmod(pairbench.analysis._hodges_lehmann).failed == 0


def _distinct_magnitudes(rng: np.random.Generator, n: int, scale: float = 1.0) -> np.ndarray:
    magnitudes = rng.choice(np.arange(1, 20 * n), size=n, replace=False) * scale
    signs = rng.choice([-1.0, 1.0], size=n)
    return np.asarray(magnitudes * signs + 0.3 * magnitudes.mean() * scale, dtype=np.float64)


def _case(
    seed: int, n: int, kind: str, confidence: float = 0.95, exact: bool | None = None
) -> tuple[float, bool | None, list[float], list[float]]:
    rng = np.random.default_rng(seed)
    b = rng.integers(1_000, 5_000, size=n).astype(float)
    if kind == "distinct":  # no ties, no zeros: exact below 50
        d = _distinct_magnitudes(rng, n)
        d = np.round(d)  # integers keep the data identical in R and Python
        d[d == 0] = 0.5
        d = _distinct_magnitudes(rng, n) if len(np.unique(np.abs(d))) < n else d
    elif kind == "dyadic":  # no ties, fractional values exact in binary
        d = np.round(_distinct_magnitudes(rng, n)) / 16 + 1 / 32
    elif kind == "ties":  # small integer range: ties and zeros
        d = rng.integers(-6, 12, size=n).astype(float)
    elif kind == "latency":  # millisecond-scale skewed differences, some ties
        d = np.round(rng.lognormal(7, 1, size=n) - rng.lognormal(6.8, 1, size=n))
    else:
        raise AssertionError(kind)
    return confidence, exact, (b + d).tolist(), b.tolist()


CASES = [
    _case(1, 3, "distinct"),  # confidence not achievable: R states a lower level
    _case(2, 5, "distinct"),
    _case(3, 9, "distinct"),
    _case(4, 17, "dyadic"),
    _case(5, 30, "distinct", confidence=0.9),
    _case(6, 49, "dyadic", confidence=0.99),
    _case(7, 60, "distinct", exact=True),  # forced exact above 50
    _case(8, 20, "distinct", exact=False),  # forced normal below 50
    _case(9, 60, "dyadic"),  # normal, no ties
    _case(10, 150, "distinct"),
    _case(11, 10, "ties"),  # normal because of ties below 50
    _case(12, 4, "ties"),
    _case(13, 80, "ties"),  # ties and zeros
    _case(14, 25, "ties", exact=True),  # exact requested, falls back
    _case(15, 200, "latency"),
    _case(16, 41, "latency", confidence=0.9),
    _case(17, 7, "ties", confidence=0.8),
]


def _r_reference(cases: list[tuple[float, bool | None, list[float], list[float]]]) -> list[str]:
    if shutil.which("Rscript") is None:
        reason = (
            "Rscript not found: the Hodges-Lehmann interval is NOT pinned to R in this run. "
            "Install Debian r-base-core (make test does) to run the comparison."
        )
        skip_outside_ci(reason)
    lines = []
    for confidence, exact, a, b in cases:
        flag = "NA" if exact is None else str(exact).upper()
        lines.append(f"{confidence!r};{flag};{','.join(map(repr, a))};{','.join(map(repr, b))}")
    out = subprocess.run(
        ["Rscript", "--vanilla", str(R_SCRIPT)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return out.stdout.strip().splitlines()


def _walsh_middle(a: list[float], b: list[float]) -> tuple[float, float]:
    """The middle Walsh average(s) of the non-zero differences, by brute force."""
    d = [x - y for x, y in zip(a, b, strict=True) if x != y]
    w = sorted(
        (d[i] + d[j]) / 2 for i, j in itertools.combinations_with_replacement(range(len(d)), 2)
    )
    return w[(len(w) - 1) // 2], w[len(w) // 2]


def test_matches_r_wilcox_test() -> None:
    rows = _r_reference(CASES)
    assert len(rows) == len(CASES)
    kinds = set()
    for (confidence, exact, a, b), row in zip(CASES, rows, strict=True):
        r_est, r_low, r_high, r_conf = map(float, row.split())
        got = hodges_lehmann(a, b, confidence, exact=exact)
        kinds.add((got.exact, got.n_zero > 0, "ties" in got.method))
        assert got.confidence == pytest.approx(r_conf, abs=1e-12)
        lo_mid, hi_mid = _walsh_middle(a, b)
        assert got.estimate == pytest.approx((lo_mid + hi_mid) / 2, abs=1e-12)
        if r_conf == 0:
            assert got.low is None and got.high is None
            continue
        assert got.low is not None and got.high is not None
        if got.exact:
            assert "exact" in got.method
            assert (got.estimate, got.low, got.high) == pytest.approx(
                (r_est, r_low, r_high), abs=1e-9
            )
        else:
            assert "normal-approximate" in got.method
            assert got.low == pytest.approx(r_low, abs=1e-4)
            assert got.high == pytest.approx(r_high, abs=1e-4)
            # R's normal-branch estimate is uniroot's first zero of the uncorrected z, a
            # step function that is zero on the whole gap between the two middle Walsh
            # averages when their count is even: it lands anywhere in that gap. Ours is
            # its midpoint, the median of the Walsh averages, as in the exact branch.
            assert lo_mid - 1e-4 <= r_est <= hi_mid + 1e-4
            if lo_mid == hi_mid:
                assert got.estimate == pytest.approx(r_est, abs=1e-4)
    # The cases really cover exact and normal branches, with and without ties and zeros.
    assert {(True, False, False), (False, False, False), (False, True, True)} <= kinds


def test_zero_differences_are_dropped_and_counted() -> None:
    r = hodges_lehmann([5, 6, 7, 8, 9], [5, 4, 4, 4, 4])
    assert r.n == 5 and r.n_zero == 1 and not r.exact
    assert "1 zero differences dropped" in r.method


def test_degenerate_inputs_say_why() -> None:
    all_zero = hodges_lehmann([1.0, 2.0], [1.0, 2.0])
    assert all_zero.estimate is None and all_zero.low is None
    assert "all 2 differences are zero" in all_zero.method
    equal = hodges_lehmann([3.0, 3.0, 3.0], [1.0, 1.0, 1.0])
    assert equal.estimate == 2.0 and equal.low is None and "no spread" in equal.method
    tiny = hodges_lehmann([3.0], [1.0])
    assert tiny.estimate == 2.0 and tiny.low is None and tiny.confidence == 0.0
    with pytest.raises(ValueError, match="no pairs"):
        hodges_lehmann([], [])
    with pytest.raises(ValueError, match="one per trial"):
        hodges_lehmann([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        hodges_lehmann([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(ValueError, match="confidence"):
        hodges_lehmann([1.0, 2.0], [0.0, 0.0], confidence=1.0)


def test_returns_named_result() -> None:
    r = hodges_lehmann([4.0, 5.0, 9.0, 2.0, 8.0, 7.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    assert isinstance(r, HodgesLehmann) and r.exact and r.n == 6


pairs = st.lists(
    st.tuples(st.integers(-50, 50), st.integers(-50, 50)), min_size=1, max_size=70
) | st.lists(
    st.tuples(
        st.floats(-1e4, 1e4, allow_nan=False, width=32),
        st.floats(-1e4, 1e4, allow_nan=False, width=32),
    ),
    min_size=1,
    max_size=70,
)


@settings(max_examples=150, deadline=None)
@given(pairs, st.sampled_from([0.8, 0.9, 0.95, 0.99]), st.sampled_from([None, True, False]))
def test_swapping_arms_negates_and_interval_contains_estimate(
    data: list[tuple[float, float]], confidence: float, exact: bool | None
) -> None:
    a = [float(x) for x, _ in data]
    b = [float(y) for _, y in data]
    ab = hodges_lehmann(a, b, confidence, exact=exact)
    ba = hodges_lehmann(b, a, confidence, exact=exact)
    assert (ab.exact, ab.confidence, ab.n_zero) == (ba.exact, ba.confidence, ba.n_zero)
    if ab.estimate is None:
        assert ba.estimate is None
        return
    assert ba.estimate == -ab.estimate
    if ab.low is None or ab.high is None:
        assert ba.low is None and ba.high is None
        return
    assert (ba.low, ba.high) == (-ab.high, -ab.low)
    assert ab.low <= ab.estimate <= ab.high
