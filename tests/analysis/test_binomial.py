"""The binomial probabilities the large-n paths use are scipy.stats.binom's, bit for bit:
they call the same ufuncs without importing scipy.stats."""

from __future__ import annotations

import subprocess
import sys

import pytest
from scipy.stats import binom

from pairbench.analysis._binomial import binom_cdf, binom_pmf, binom_ppf, binom_sf

NS = [1, 2, 7, 1001, 2_000, 50_000, 112_481, 1_000_000]


@pytest.mark.parametrize("n", NS)
def test_every_tail_is_scipy_stats_own_value(n: int) -> None:
    ks = sorted({-3, -1, 0, 1, n // 3, n // 2 - 1, n // 2, n // 2 + 1, n - 1, n, n + 5})
    for p in (0.5, 0.013, 0.9):
        for k in ks:
            assert binom_cdf(k, n, p) == float(binom.cdf(k, n, p)), (k, n, p)
            assert binom_sf(k, n, p) == float(binom.sf(k, n, p)), (k, n, p)
            assert binom_pmf(k, n, p) == float(binom.pmf(k, n, p)), (k, n, p)
        for q in (1e-9, 0.025, 0.5, 0.975):
            assert binom_ppf(q, n, p) == int(binom.ppf(q, n, p)), (q, n, p)


def test_a_bad_quantile_is_refused() -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        binom_ppf(1.0, 10, 0.5)


def test_the_large_n_paths_do_not_import_scipy_stats() -> None:
    # The point of calling the ufuncs: a report with many discordant pairs and a long
    # median interval no longer pays scipy.stats' import (~0.55 s).
    code = (
        "import sys\n"
        "from pairbench.analysis import mcnemar_exact, mcnemar_midp\n"
        "from pairbench.analysis._median import order_statistic_rank\n"
        "from pairbench.analysis._discordant_share import mcnemar_p\n"
        "mcnemar_exact(56_000, 56_100); mcnemar_midp(56_000, 56_100)\n"
        "order_statistic_rank(50_000, 0.95); mcnemar_p(900, 1100, 'greater', mid_p=True)\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
