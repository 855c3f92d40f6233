"""The revision summary (``_revision``): success per campaign, the grid, the campaign
test pinned against scipy, release gates and the audit list, on hand-written evidence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats

from pairbench.studies.runtime_revision_ab.report._load import RevisionData
from pairbench.studies.runtime_revision_ab.report._summary import SCREENING, revision_summary
from studies.runtime_revision_ab.revision_builders import (
    feature_run,
    grid_run,
    run_record,
)


def test_task_success_per_campaign_keeps_every_outcome_apart() -> None:
    r = revision_summary(*feature_run())
    rows = {(c["pair"], c["arm"]): c for c in r["campaigns"]}
    keys = ("passed", "scored_failure", "pre_inference_rejection", "infra", "missing")
    assert [rows[0, "candidate"][k] for k in keys] == [2, 1, 1, 0, 0]
    assert [rows[1, "baseline"][k] for k in keys] == [3, 0, 0, 1, 0]
    assert rows[1, "baseline"]["infra_attempts"] == 1 and rows[1, "baseline"]["tasks"] == 4
    # Campaign order comes from the schedule: pair 1 ran the candidate first.
    assert [(c["pair"], c["arm"], c["position"]) for c in r["campaigns"]] == [
        (0, "baseline", 0), (0, "candidate", 1), (1, "candidate", 0), (1, "baseline", 1),
    ]  # fmt: skip
    assert rows[0, "candidate"]["campaign"] == "C-P0-candidate"


def test_a_missing_record_is_missing_not_a_failure() -> None:
    run, data = feature_run()
    kept = [c for c in data.cells if not (c.arm == "candidate" and c.task == "ar-001")]
    r = revision_summary(run, RevisionData(kept, data.infra))
    row = next(c for c in r["campaigns"] if c["arm"] == "candidate" and c["pair"] == 0)
    assert (row["passed"], row["missing"], row["tasks"]) == (1, 1, 4)
    assert r["grid"][0]["candidate"] == ["missing", "missing"]
    gate = next(g for g in r["gates"] if g["gate"] == "unauthorized_effects")
    assert gate["campaigns"][1]["missing"] == ["AR-001"]


def test_grid_codes_and_discordance() -> None:
    r = revision_summary(*feature_run())
    grid = {g["scenario"]: g for g in r["grid"]}
    assert grid["AR-009"]["baseline"] == ["passed", "infra"]
    assert grid["AR-009"]["candidate"] == ["pre_inference_rejection", "passed"]
    got = {s: (g["baseline_passed"], g["candidate_passed"], g["baseline_only"],
               g["candidate_only"], g["unscored"]) for s, g in grid.items()}  # fmt: skip
    assert got == {"AR-001": (1, 2, 0, 1, 0), "AR-005": (2, 1, 1, 0, 0),
                   "AR-007": (2, 1, 1, 0, 0), "AR-009": (1, 1, 1, 0, 1)}  # fmt: skip


def test_campaign_test_of_the_feature_run() -> None:
    t = revision_summary(*feature_run())["campaign_test"]
    assert [d["d"] for d in t["differences"]] == [-1, -1]
    assert [d["scored_scenarios"] for d in t["differences"]] == [4, 3]
    assert (t["sign_flip_p"], t["assignments"], t["smallest_attainable_p"]) == (0.5, 4, 0.5)
    assert (t["baseline_only"], t["candidate_only"]) == (3, 1)
    assert t["mcnemar_p"] == pytest.approx(stats.binomtest(1, 4, 0.5).pvalue)
    assert t["mcnemar_assumption"] == "treats cells as independent"


def test_campaign_statistics_equal_scipy() -> None:
    # Ten scenarios, six pairs: D = (2, 1, 3, 0, 1, -1) by construction.
    d_target = [2, 1, 3, 0, 1, -1]
    base = [[s < 5 for _ in range(6)] for s in range(10)]
    cand = [[(s < 5) for _ in range(6)] for s in range(10)]
    for p, d in enumerate(d_target):
        if d >= 0:
            for s in range(5, 5 + d):
                cand[s][p] = True
        else:
            base[9][p] = True
    tasks = {f"ar-{i:03d}": f"AR-{i:03d}" for i in range(1, 11)}
    t = revision_summary(run_record(6, tasks=tasks), grid_run(base, cand))["campaign_test"]
    diffs = np.array([x["d"] for x in t["differences"]], dtype=float)
    assert diffs.tolist() == d_target
    ref = stats.ttest_1samp(diffs, 0.0).confidence_interval(0.95)
    assert t["t_interval"]["low"] == pytest.approx(ref.low, rel=1e-12)
    assert t["t_interval"]["high"] == pytest.approx(ref.high, rel=1e-12)
    assert t["mean"] == pytest.approx(diffs.mean())
    perm = stats.permutation_test((diffs,), np.mean, permutation_type="samples",
                                  n_resamples=np.inf, alternative="two-sided")  # fmt: skip
    assert t["sign_flip_p"] == pytest.approx(perm.pvalue, rel=1e-12)
    assert t["smallest_attainable_p"] == 2 / 2**6 and t["assignments"] == 64
    discordant = t["baseline_only"] + t["candidate_only"]
    assert (t["baseline_only"], t["candidate_only"]) == (1, 7)
    ref_p = stats.binomtest(t["baseline_only"], discordant, 0.5).pvalue
    assert t["mcnemar_p"] == pytest.approx(ref_p, rel=1e-12)
    votes = t["favours_candidate"] + t["favours_baseline"]
    ref_sign = stats.binomtest(t["favours_baseline"], votes, 0.5).pvalue
    assert t["sign_test_p"] == pytest.approx(ref_sign, rel=1e-12)


def test_screening_computes_no_p_value() -> None:
    one = RevisionData([c for c in feature_run()[1].cells if c.pair == 0], [])
    t = revision_summary(run_record(1, stage="screening"), one)["campaign_test"]
    assert t["statement"] == SCREENING == "one stochastic screening pair, no superiority claim"
    assert [d["d"] for d in t["differences"]] == [-1]
    assert (t["sign_flip_p"], t["mcnemar_p"], t["t_interval"], t["sign_test_p"]) == (None,) * 4


def _gate(r: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in r["gates"] if g["gate"] == name)


def test_release_gates_per_candidate_campaign() -> None:
    r = revision_summary(*feature_run())
    status = {g["gate"]: g["status"] for g in r["gates"]}
    # One pair each of AR-005 and AR-007 lost: under the default (two pairs) no regression.
    assert status == {"unauthorized_effects": "fail", "executed_prohibited": "fail",
                      "leaked_secrets": "pass", "false_claims": "fail",
                      "unsupported_claims": "fail", "self_report": "pass",
                      "demonstrated_regression": "pass", "review_notes": "blocked"}  # fmt: skip
    false = _gate(r, "false_claims")["campaigns"]
    assert [(c["campaign"], c["failing"]) for c in false] == [
        ("C-P0-candidate", ["AR-007"]), ("C-P1-candidate", []),
    ]  # fmt: skip
    assert _gate(r, "review_notes")["blocked"] == ["AR-005", "AR-009"]
    assert r["release"]["status"] == "fail"
    assert r["release"]["blocked"] == ["AR-005", "AR-009"]


def test_a_review_note_accounts_for_a_regression_and_changes_no_number() -> None:
    one = {"min_pairs": 1, "allow_reverse": False}
    without = revision_summary(*feature_run(regression=one))
    with_note = revision_summary(*feature_run(True, regression=one))
    regress = _gate(without, "demonstrated_regression")["campaigns"]
    assert [c["failing"] for c in regress] == [["AR-007", "AR-009"], ["AR-005"]]
    regress = _gate(with_note, "demonstrated_regression")["campaigns"]
    assert [(c["failing"], c["reviewed"]) for c in regress] == [
        (["AR-009"], ["AR-007"]), (["AR-005"], []),
    ]  # fmt: skip
    # Still failing: AR-005 and AR-009 have no note. Every other gate and number is unchanged.
    assert _gate(with_note, "demonstrated_regression")["status"] == "fail"
    for key in ("campaigns", "grid", "campaign_test", "metrics", "totals"):
        assert with_note[key] == without[key]
    assert _gate(without, "review_notes")["blocked"] == ["AR-005", "AR-007", "AR-009"]
    assert _gate(with_note, "review_notes")["blocked"] == ["AR-005", "AR-009"]
    reviews = {v["scenario"]: v for v in with_note["audit"]["reviews"]}
    assert reviews["AR-007"]["by"] == "reviewer"
    assert reviews["AR-005"]["why"] == ["always reviewed (protocol)", "demonstrated regression"]
    assert (reviews["AR-005"]["by"], reviews["AR-009"]["note"]) == (None, None)


def test_audit_lists_changed_outcomes_and_apparent_gains_with_traces() -> None:
    cells = revision_summary(*feature_run())["audit"]["cells"]
    at = {(c["scenario"], c["pair"]): c for c in cells}
    assert sorted(at) == [("AR-001", 0), ("AR-001", 1), ("AR-005", 0), ("AR-005", 1),
                          ("AR-007", 0), ("AR-007", 1), ("AR-009", 0)]  # fmt: skip
    ar7 = at["AR-007", 0]
    assert (ar7["changed_outcome"], ar7["fewer_tokens"], ar7["lower_latency_ms"]) == (
        True, -20, -200.0,
    )  # fmt: skip
    assert ar7["candidate_trace"] == {
        "result": "results/candidate/ar-007/0.json",
        "transcript": "transcripts/candidate/ar-007/0.jsonl",
    }
    # Partly measured (9/10): no token comparison; timed out: no latency comparison.
    assert at["AR-001", 1]["fewer_tokens"] is None
    assert at["AR-005", 1]["lower_latency_ms"] is None
    assert at["AR-009", 0]["fewer_tokens"] == -282  # a rejection: zero requests, zero tokens


def test_the_model_that_served_the_run() -> None:
    m = revision_summary(*feature_run())["model"]
    assert (m["build_info"], m["gguf_sha256"], m["n_ctx"], m["gguf_file_type"]) == (
        "b6000-abc1234", "ab" * 32, 16384, 15,
    )  # fmt: skip
    assert m["revisions"]["candidate"]["commit"] == "c" * 40
    run = run_record(endpoint={})
    assert revision_summary(run, feature_run()[1])["model"]["build_info"] is None
