"""The mid-p McNemar value, pinned to R's binomial distribution (``pbinom``/``dbinom``, the
textbook definition: Fagerland, Lydersen and Laake 2013) and to scipy's, never to our own
earlier output."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from scipy.stats import binom

from helpers.common import skip_outside_ci
from pairbench.analysis import mcnemar_exact, mcnemar_midp

pytestmark = pytest.mark.r

CASES = [(0, 0), (1, 9), (9, 1), (0, 5), (2, 3), (3, 3), (4, 11), (10, 30), (0, 1), (700, 760),
         (40, 1200)]  # fmt: skip


def _r_midp(cases: list[tuple[int, int]]) -> list[float]:
    if shutil.which("Rscript") is None:
        skip_outside_ci(
            "Rscript not found: the mid-p McNemar is NOT pinned to R in this run. Install "
            "Debian r-base-core (make test does)."
        )
    program = (
        "x <- read.table(file('stdin'), sep=',')\n"
        "for (i in seq_len(nrow(x))) { n <- x[i,1] + x[i,2]; k <- min(x[i,1], x[i,2]);\n"
        "  p <- if (n == 0) 1 else min(1, 2 * (pbinom(k, n, 0.5) - 0.5 * dbinom(k, n, 0.5)));\n"
        "  cat(sprintf('%.17g\\n', p)) }\n"
    )
    out = subprocess.run(
        ["Rscript", "--vanilla", "-e", program],
        input="".join(f"{a},{b}\n" for a, b in cases),
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return [float(line) for line in out.stdout.split()]


def test_mid_p_matches_r() -> None:
    for (a, b), expected in zip(CASES, _r_midp(CASES), strict=True):
        assert mcnemar_midp(a, b) == pytest.approx(expected, rel=1e-12, abs=1e-15), (a, b)


def test_mid_p_matches_scipy_and_sits_below_the_exact_p() -> None:
    for a, b in CASES:
        n, k = a + b, min(a, b)
        if n == 0:
            continue
        reference = min(1.0, 2 * (binom.cdf(k, n, 0.5) - 0.5 * binom.pmf(k, n, 0.5)))
        assert mcnemar_midp(a, b) == pytest.approx(reference, rel=1e-9, abs=1e-15)
        assert mcnemar_midp(a, b) <= mcnemar_exact(a, b)


def test_mid_p_refuses_a_bad_count() -> None:
    with pytest.raises(ValueError, match="a_only must be a non-negative whole number"):
        mcnemar_midp(-1, 3)
