"""One-sided McNemar and sign-flip p values and the intervals that invert McNemar, pinned
to scipy (binomtest, permutation_test), statsmodels (Clopper-Pearson) and R's binomial
(the mid-p tails), never to our own earlier output."""

from __future__ import annotations

import shutil
import subprocess
from typing import Literal

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from helpers.common import skip_outside_ci
from pairbench.analysis import (
    discordant_share_interval,
    mcnemar_exact,
    mcnemar_midp,
    mcnemar_p,
    sign_flip_test,
)

CASES = [(0, 0), (1, 9), (9, 1), (0, 5), (5, 0), (2, 3), (3, 3), (4, 11), (10, 30), (17, 6)]


@pytest.mark.parametrize(("a", "b"), CASES)
def test_one_sided_exact_matches_scipy(a: int, b: int) -> None:
    if a + b == 0:
        assert mcnemar_p(a, b, "greater") == mcnemar_p(a, b, "less") == 1.0
        return
    for alternative in ("greater", "less"):
        expected = stats.binomtest(a, a + b, 0.5, alternative=alternative).pvalue
        assert mcnemar_p(a, b, alternative) == pytest.approx(expected, rel=1e-12)
    assert mcnemar_p(a, b) == mcnemar_exact(a, b)
    assert mcnemar_p(a, b, mid_p=True) == mcnemar_midp(a, b)


@pytest.mark.r
def test_one_sided_mid_p_matches_r() -> None:
    if shutil.which("Rscript") is None:
        skip_outside_ci("Rscript not found: the one-sided mid-p is NOT pinned to R in this run")
    program = (
        "x <- read.table(file('stdin'), sep=',')\n"
        "for (i in seq_len(nrow(x))) { a <- x[i,1]; n <- a + x[i,2];\n"
        "  p <- 1 - pbinom(a - 1, n, 0.5) - 0.5 * dbinom(a, n, 0.5);\n"
        "  cat(sprintf('%.17g\\n', p)) }\n"
    )
    cases = [c for c in CASES if sum(c) > 0]
    out = subprocess.run(
        ["Rscript", "--vanilla", "-e", program],
        input="".join(f"{a},{b}\n" for a, b in cases),
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    for (a, b), expected in zip(cases, map(float, out.stdout.split()), strict=True):
        assert mcnemar_p(a, b, "greater", mid_p=True) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(("a", "b"), [c for c in CASES if sum(c) > 0])
def test_clopper_pearson_matches_statsmodels(a: int, b: int) -> None:
    low, high = discordant_share_interval(a, b, 0.95)
    ref = proportion_confint(a, a + b, alpha=0.05, method="beta")
    assert (low, high) == pytest.approx((float(ref[0]), float(ref[1])), abs=1e-9)


@pytest.mark.parametrize(("a", "b"), [c for c in CASES if sum(c) > 0])
def test_mid_p_interval_ends_put_half_alpha_in_each_mid_tail(a: int, b: int) -> None:
    n = a + b
    low, high = discordant_share_interval(a, b, 0.95, mid_p=True)
    if a > 0:  # P(X > a) + P(X = a) / 2 at the lower end is 0.025
        tail = stats.binom.sf(a, n, low) + 0.5 * stats.binom.pmf(a, n, low)
        assert tail == pytest.approx(0.025, abs=1e-9)
    else:
        assert low == 0.0
    if a < n:
        tail = stats.binom.cdf(a - 1, n, high) + 0.5 * stats.binom.pmf(a, n, high)
        assert tail == pytest.approx(0.025, abs=1e-9)
    else:
        assert high == 1.0


def test_each_interval_excludes_one_half_exactly_when_its_test_rejects() -> None:
    for n in range(1, 31):
        for a in range(n + 1):
            for mid_p in (False, True):
                p = mcnemar_p(a, n - a, mid_p=mid_p)
                low, high = discordant_share_interval(a, n - a, 0.95, mid_p=mid_p)
                if abs(p - 0.05) < 1e-9:
                    continue  # on the boundary itself floating point may fall either way
                assert (p <= 0.05) == (not low <= 0.5 <= high), (a, n, mid_p)


@pytest.mark.parametrize("alternative", ["greater", "less"])
@pytest.mark.parametrize("d", [[1, 2, 0, 3, 1, 1], [2, -1, 0, 1, 3, 0, 1], [-2, -1, 0, -3, 1]])
def test_one_sided_sign_flip_matches_scipy(
    d: list[int], alternative: Literal["greater", "less"]
) -> None:
    ref = stats.permutation_test(
        (np.asarray(d, dtype=float),),
        np.mean,
        permutation_type="samples",
        n_resamples=np.inf,
        alternative=alternative,
    )
    assert sign_flip_test(d, alternative).p_value == pytest.approx(ref.pvalue, rel=1e-12)
