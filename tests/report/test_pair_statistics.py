"""Arm-pair statistics in summary.json, pinned to independent computations."""

import hashlib
import math
import re
from typing import Any

import numpy as np
import pytest
from scipy import stats
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from helpers.report_builders import PLANTED_ARMS, make_planted, make_planted_run
from pairbench.report.render._html import render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.store._records import TrialResult

PAIR_KEYS = {
    "a", "b", "declared", "test", "pairs", "unmatched_a", "unmatched_b", "both", "a_only",
    "b_only", "neither", "success_a", "success_b", "difference", "correlation",
    "mcnemar_exact_p", "mcnemar_midp_p", "mcnemar_holm_p", "metrics", "conditional",
    "without_replacements",
}  # fmt: skip


def _passed(results: list[TrialResult], arm: str) -> dict[tuple[str, int], bool]:
    return {(r.task, r.trial): r.outcome == "passed" for r in results if r.arm == arm}


def _table(results: list[TrialResult], a: str, b: str) -> tuple[int, int, int, int]:
    pa, pb = _passed(results, a), _passed(results, b)
    keys = pa.keys() & pb.keys()
    both = sum(pa[k] and pb[k] for k in keys)
    a_only = sum(pa[k] and not pb[k] for k in keys)
    b_only = sum(pb[k] and not pa[k] for k in keys)
    return both, a_only, b_only, len(keys) - both - a_only - b_only


def _newcombe10(a: int, b: int, c: int, d: int) -> tuple[float, float, float]:
    """Newcombe (1998) method 10, written out from the paper with statsmodels' Wilson."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, alpha=0.05, method="wilson")
    l2, u2 = proportion_confint(a + c, n, alpha=0.05, method="wilson")
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    ad_bc = a * d - b * c
    num = max(ad_bc - n / 2, 0) if ad_bc >= 0 else ad_bc
    phi = 0.0 if margins == 0 else num / math.sqrt(margins)
    dd = p1 - p2
    low = dd - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = dd + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return dd, low, high


def _pair(summary: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    return next(p for p in summary["pairs"] if (p["a"], p["b"]) == (a, b))


def test_planted_effect_pair_keys_and_values() -> None:
    results = make_planted()
    s = build_summary(make_planted_run(), results, [])
    p = _pair(s, "control", "treatment")
    assert set(p) == PAIR_KEYS
    both, a_only, b_only, neither = _table(results, "control", "treatment")
    assert b_only > a_only + 5  # the planted effect is visible
    assert (p["pairs"], p["both"], p["a_only"], p["b_only"], p["neither"]) == (
        30,
        both,
        a_only,
        b_only,
        neither,
    )
    dd, low, high = _newcombe10(both, a_only, b_only, neither)
    assert p["difference"]["estimate"] == pytest.approx(dd, abs=1e-12)
    assert p["difference"]["ci95"] == pytest.approx([low, high], abs=1e-9)
    assert "Newcombe" in p["difference"]["method"] and "method 10" in p["difference"]["method"]
    pa, pb = _passed(results, "control"), _passed(results, "treatment")
    keys = sorted(pa)
    phi = np.corrcoef([pa[k] for k in keys], [pb[k] for k in keys])[0, 1]
    assert p["correlation"] == pytest.approx(phi, abs=1e-12) and phi > 0
    table = [[both, a_only], [b_only, neither]]
    assert p["mcnemar_exact_p"] == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
    assert p["mcnemar_holm_p"] == p["mcnemar_exact_p"]  # one declared comparison
    # mid-p (Fagerland et al. 2013): twice the tail below the smaller count plus the point
    # probability of the observed split, from scipy's binomial.
    k, n = min(a_only, b_only), a_only + b_only
    midp = 2.0 * stats.binom.cdf(k - 1, n, 0.5) + stats.binom.pmf(k, n, 0.5)
    assert p["mcnemar_midp_p"] == pytest.approx(min(1.0, midp), abs=1e-12)
    assert p["mcnemar_midp_p"] < p["mcnemar_exact_p"]
    assert p["mcnemar_exact_p"] < 0.01


def test_task_clustered_interval_is_seeded_from_run_seed_and_sound() -> None:
    results = make_planted()
    run = make_planted_run()
    s = build_summary(run, results, [])
    tc = _pair(s, "control", "treatment")["difference"]["task_clustered"]
    text = "pairbench.report|424242|control|treatment|success|with_replacements"
    assert tc["seed"] == int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    assert (tc["tasks"], tc["reps"]) == (5, 10_000)
    assert "bootstrap" in tc["method"] and "task" in tc["method"]
    assert build_summary(run, results, [])["pairs"] == s["pairs"]  # reproducible
    # An independent cluster bootstrap (own generator, own loop) agrees to Monte Carlo error.
    pa, pb = _passed(results, "control"), _passed(results, "treatment")
    by_task: dict[str, list[float]] = {}
    for k in pa:
        by_task.setdefault(k[0], []).append(float(pa[k]) - float(pb[k]))
    groups = list(by_task.values())
    rng = np.random.default_rng(99)
    stats = []
    for _ in range(20_000):
        drawn = [groups[j] for j in rng.integers(0, len(groups), len(groups))]
        stats.append(np.mean(np.concatenate(drawn)))
    low, high = np.quantile(stats, [0.025, 0.975])
    assert tc["ci95"] == pytest.approx([low, high], abs=0.04)
    other = build_summary(make_planted_run(run_seed=1), results, [])
    assert (
        _pair(other, "control", "treatment")["difference"]["task_clustered"]["seed"] != tc["seed"]
    )


def test_one_trial_per_task_has_no_clustered_interval() -> None:
    results = [r for r in make_planted() if r.trial == 0]
    s = build_summary(make_planted_run(), results, [])
    assert _pair(s, "control", "treatment")["difference"]["task_clustered"] is None
    assert "n/a: one trial per task" in render_markdown(s)


def test_undeclared_pairs_have_no_p_anywhere() -> None:
    results = make_planted()
    s = build_summary(make_planted_run(), results, [])
    declared_p = _pair(s, "control", "treatment")["mcnemar_exact_p"]
    undeclared = [p for p in s["pairs"] if not p["declared"]]
    assert [(p["a"], p["b"]) for p in undeclared] == [("control", "other"), ("treatment", "other")]
    for p in undeclared:
        for family in (p, p["without_replacements"]):
            assert family["mcnemar_exact_p"] is None and family["mcnemar_holm_p"] is None
            assert family["mcnemar_midp_p"] is None
        # The p value the report must not show, computed independently.
        _, a_only, b_only, _ = _table(results, p["a"], p["b"])
        hidden = binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue
        assert f"{hidden:.4f}" != f"{declared_p:.4f}"  # else the check below proves nothing
        for text in (render_markdown(s), render_html(s)):
            assert f"p = {hidden:.4f}" not in text
    for text in (render_markdown(s), render_html(s)):
        rows = [line for line in text.splitlines() if "other" in line and " vs " in line]
        assert rows
        for row in rows:
            assert not re.search(r"p (=|<|&lt;) ?0\.\d", row), row
        # Only the declared comparison prints p values, its exact and its mid-p (no
        # replacements: one table).
        assert len(re.findall(r"p (=|<|&lt;) 0\.\d+", text)) == 2


def test_holm_with_two_declared_comparisons_matches_statsmodels() -> None:
    results = make_planted()
    run = make_planted_run(comparisons=[["control", "treatment"], ["other", "control"]])
    s = build_summary(run, results, [])
    declared = [p for p in s["pairs"] if p["declared"]]
    assert [(p["a"], p["b"]) for p in declared] == [("control", "treatment"), ("control", "other")]
    raw = []
    for p in declared:
        both, a_only, b_only, neither = _table(results, p["a"], p["b"])
        raw.append(mcnemar([[both, a_only], [b_only, neither]], exact=True).pvalue)
    adjusted = multipletests(raw, method="holm")[1]
    assert [p["mcnemar_exact_p"] for p in declared] == pytest.approx(raw, abs=1e-12)
    assert [p["mcnemar_holm_p"] for p in declared] == pytest.approx(list(adjusted), abs=1e-12)
    assert _pair(s, "treatment", "other")["mcnemar_holm_p"] is None
    md = render_markdown(s)
    assert "Holm-adjusted p" in md
    for value in adjusted:
        assert (f"p = {value:.4f}" if value >= 1e-4 else "p < 0.0001") in md


def test_single_declared_comparison_shows_no_holm_column() -> None:
    s = build_summary(make_planted_run(), make_planted(), [])
    assert "Holm-adjusted p" not in render_markdown(s)


def test_arm_order_follows_declaration() -> None:
    s = build_summary(make_planted_run(), make_planted(), [])
    assert [(p["a"], p["b"]) for p in s["pairs"]] == [
        (PLANTED_ARMS[0], PLANTED_ARMS[1]), (PLANTED_ARMS[0], PLANTED_ARMS[2]),
        (PLANTED_ARMS[1], PLANTED_ARMS[2]),
    ]  # fmt: skip
