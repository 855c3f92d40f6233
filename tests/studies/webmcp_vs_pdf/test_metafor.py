"""Cross-check the engine against R's metafor, run live through ``Rscript``.

Outside CI a missing R or metafor skips these tests with a loud reason; under
``CI=true`` it fails them instead, since CI installs ``r-cran-metafor``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from helpers.common import skip_outside_ci
from pairbench.studies.webmcp_vs_pdf import (
    DATASET_PATH,
    egger_test,
    fit_dataset,
    fit_random_effects,
    load_dataset,
)

pytestmark = pytest.mark.r

_SCRIPT = r"""
suppressMessages(library(metafor))
d <- read.csv(commandArgs(trailingOnly=TRUE)[1])
show <- function(name, r) cat(name, sprintf("%.17g", c(r$k, c(r$b), r$ci.lb, r$ci.ub, r$pval,
    r$tau2, r$I2, r$QE, r$QEp)), "\n")
full <- rma(yi, vi, data=d, method="REML")
show("full", full)
show("no_s04", rma(yi, vi, data=d, subset=record != "s04", method="REML"))
lm <- regtest(full, model="lm")
cat("classic", sprintf("%.17g", c(lm$zval, lm$pval, lm$dfs)), "\n")
mx <- regtest(full)
cat("rma", sprintf("%.17g", c(mx$zval, mx$pval)), "\n")
"""
_FIT_FIELDS = ("k", "estimate", "ci_lower", "ci_upper", "p", "tau2", "I2", "Q", "Q_p")


def _metafor_available() -> str | None:
    """None when usable, else why not."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return "Rscript is not on PATH (Debian package r-base-core)"
    probe = subprocess.run(
        [rscript, "-e", "suppressMessages(library(metafor))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if probe.returncode != 0:
        return f"R package metafor is missing (Debian r-cran-metafor): {probe.stderr.strip()}"
    return None


@pytest.fixture(scope="module")
def metafor(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[float]]:
    missing = _metafor_available()
    if missing is not None:
        skip_outside_ci(f"metafor cross-check: {missing}")
    script = Path(tmp_path_factory.mktemp("r")) / "check.R"
    script.write_text(_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [shutil.which("Rscript") or "Rscript", str(script), str(DATASET_PATH)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {
        line.split()[0]: [float(x) for x in line.split()[1:]]
        for line in done.stdout.splitlines()
        if line.strip()
    }


@pytest.mark.parametrize(("name", "exclude"), [("full", ()), ("no_s04", ("s04",))])
def test_rma_reml_agrees_to_1e6(
    metafor: dict[str, list[float]], name: str, exclude: tuple[str, ...]
) -> None:
    fit = fit_dataset(exclude)
    for field, expected in zip(_FIT_FIELDS, metafor[name], strict=True):
        assert getattr(fit, field) == pytest.approx(expected, abs=1e-6, rel=0), field


def test_classic_egger_agrees_with_regtest_lm(metafor: dict[str, list[float]]) -> None:
    records = load_dataset()
    classic = egger_test([r.yi for r in records], [r.vi for r in records], "classic")
    t, p, df = metafor["classic"]
    assert classic.z_or_t == pytest.approx(t, abs=1e-6, rel=0)
    assert classic.p == pytest.approx(p, abs=1e-6, rel=0)
    assert classic.df == int(df)


def test_rma_egger_agrees_with_regtest_default(metafor: dict[str, list[float]]) -> None:
    records = load_dataset()
    mixed = egger_test([r.yi for r in records], [r.vi for r in records], "rma")
    z, p = metafor["rma"]
    assert mixed.z_or_t == pytest.approx(z, abs=1e-6, rel=0)
    assert mixed.p == pytest.approx(p, abs=1e-6, rel=0)


_SYNTHETIC_SCRIPT = r"""
suppressMessages(library(metafor))
d <- read.csv(commandArgs(trailingOnly=TRUE)[1])
for (g in unique(d$set)) {
  s <- d[d$set == g, ]
  r <- rma(yi, vi, data=s, method="REML")
  e <- regtest(r, model="lm")
  cat(g, sprintf("%.17g", c(c(r$b), r$ci.lb, r$ci.ub, r$pval, r$tau2, r$I2, e$pval)), "\n")
}
"""


def test_seeded_synthetic_datasets_agree(metafor: dict[str, list[float]], tmp_path: Path) -> None:
    # Beyond the study's one dataset: small and large k, tau^2 at the boundary (set 0 is
    # under-dispersed, so the HE start and REML both hit 0) and strong heterogeneity.
    rng = np.random.default_rng(20260904)
    rows = ["set,yi,vi"]
    sets: dict[int, tuple[list[float], list[float]]] = {}
    for g, (k, tau) in enumerate([(6, 0.0), (4, 0.3), (12, 0.1), (30, 0.5), (8, 0.05)]):
        vi = rng.uniform(0.005, 0.2, size=k).round(4)
        yi = (
            0.2 + rng.normal(0, tau, size=k) + rng.normal(0, np.sqrt(vi)) * (1.0 if g else 0.2)
        ).round(3)
        sets[g] = (yi.tolist(), vi.tolist())
        rows += [f"{g},{y},{v}" for y, v in zip(yi, vi, strict=True)]
    data = tmp_path / "synthetic.csv"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    script = tmp_path / "synthetic.R"
    script.write_text(_SYNTHETIC_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [shutil.which("Rscript") or "Rscript", str(script), str(data)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    results = {int(line.split()[0]): line.split()[1:] for line in done.stdout.splitlines()}
    assert sorted(results) == sorted(sets)
    for g, (ys, vs) in sets.items():
        fit = fit_random_effects(ys, vs)
        ours = [fit.estimate, fit.ci_lower, fit.ci_upper, fit.p, fit.tau2, fit.I2]
        ours.append(egger_test(ys, vs).p)
        for mine, theirs in zip(ours, results[g], strict=True):
            assert mine == pytest.approx(float(theirs), abs=1e-6, rel=0), (g, ours, results[g])
    assert fit_random_effects(*sets[0]).tau2 == 0.0
