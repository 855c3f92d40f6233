"""The declared primary analysis: computed from the trial table as declared, pinned to
scipy and statsmodels, shown first in the report with an interval that agrees with it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from helpers.report_builders import make_planted, make_planted_run
from pairbench.report.render._html import render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.store._records import TrialResult


def _passed(results: list[TrialResult], arm: str) -> dict[tuple[str, int], bool]:
    return {(r.task, r.trial): r.outcome == "passed" for r in results if r.arm == arm}


def _summary(*primary: dict[str, Any], **run: Any) -> tuple[dict[str, Any], list[TrialResult]]:
    results = make_planted()
    experiment = {"primary": list(primary)}
    s = build_summary(make_planted_run(experiment_model=experiment, **run), results, [])
    return s, results


def test_a_declared_mcnemar_is_computed_as_scipy_and_statsmodels_compute_it() -> None:
    s, results = _summary({"arms": ["treatment", "control"], "test": "mcnemar-exact"})
    (p,) = s["primary"]
    a, b = _passed(results, "treatment"), _passed(results, "control")
    a_only = sum(a[k] and not b[k] for k in a)
    b_only = sum(b[k] and not a[k] for k in a)
    assert p["counts"] == {"a_only": a_only, "b_only": b_only, "pairs": len(a)}
    expected = stats.binomtest(a_only, a_only + b_only, 0.5).pvalue
    assert p["p_value"] == pytest.approx(expected, rel=1e-12)
    low, high = proportion_confint(a_only, a_only + b_only, alpha=0.05, method="beta")
    assert (p["low"], p["high"]) == pytest.approx((low, high), abs=1e-9)
    assert p["interval"] == "clopper-pearson" and p["interval_agrees"]
    assert p["rejects"] is True and not p["low"] <= 0.5 <= p["high"]


def test_a_one_sided_mid_p_and_its_bound() -> None:
    s, _ = _summary(
        {
            "arms": ["treatment", "control"],
            "test": "mcnemar-midp",
            "sided": "less",
            "alpha": 0.1,
        }
    )
    (p,) = s["primary"]
    a_only, b_only = p["counts"]["a_only"], p["counts"]["b_only"]
    n = a_only + b_only
    # less: P(X <= a_only) with the observed value counted by half.
    expected = stats.binom.cdf(a_only, n, 0.5) - 0.5 * stats.binom.pmf(a_only, n, 0.5)
    assert p["p_value"] == pytest.approx(expected, rel=1e-12)
    assert p["rejects"] is False and p["low"] == 0.0 and p["high"] == pytest.approx(1.0)


def test_a_campaign_sign_flip_matches_scipys_permutation_test() -> None:
    s, results = _summary({"arms": ["treatment", "control"], "test": "sign-flip"})
    (p,) = s["primary"]
    a, b = _passed(results, "treatment"), _passed(results, "control")
    trials = sorted({t for _, t in a})
    d = [sum(int(a[k]) - int(b[k]) for k in a if k[1] == i) for i in trials]
    assert p["differences"] == d and p["unit"] == "campaign pair"
    ref = stats.permutation_test(
        (np.asarray(d, dtype=float),), np.mean, permutation_type="samples",
        n_resamples=np.inf, alternative="two-sided",
    )  # fmt: skip
    assert p["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
    # The interval inverts the test: 0 is outside exactly when the test rejects.
    inside = (p["low"] is None or p["low"] <= 0) and (p["high"] is None or p["high"] >= 0)
    assert p["rejects"] == (not inside)


def test_a_screening_run_computes_no_primary() -> None:
    s, _ = _summary({"arms": ["treatment", "control"], "test": "sign-flip"}, stage="screening")
    (p,) = s["primary"]
    assert p["p_value"] is None and "screening" in p["reason"]


@pytest.mark.parametrize("render", [render_markdown, render_html])
def test_the_report_leads_with_the_primary_analysis(render: Any) -> None:
    s, _ = _summary(
        {"arms": ["treatment", "control"], "test": "mcnemar-exact", "interval": "newcombe"}
    )
    text = render(s)
    first = text.index("Primary analysis")
    assert first < text.index("Arms") and first < text.index("Arm pairs: success")
    assert "exact McNemar (binomial test on the discordant trials), two-sided" in text
    # Newcombe does not invert McNemar: the report says the two can disagree.
    assert "does not invert the test: the two can disagree, and the test decides" in text


def test_no_declaration_no_section() -> None:
    s, _ = _summary()
    assert s["primary"] == [] and "Primary analysis" not in render_markdown(s)
