"""A screening run's report carries no p value; a confirmation run's does."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.campaign import approved_plan, campaign_experiment
from pairbench import start_run
from pairbench.report import write_report


def test_a_screening_report_says_so_and_shows_no_p_value(tmp_path: Path) -> None:
    exp = campaign_experiment(tmp_path)
    outcome = start_run(exp, tmp_path / "runs", stage="screening", run_seed=3)
    paths = write_report(outcome.run_dir)
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    assert summary["run"]["stage"] == "screening"
    [pair] = summary["pairs"]
    assert pair["declared"] is True  # the comparison is declared: the stage withholds the test
    assert pair["test"] == "screening: one campaign pair, no test"
    assert pair["mcnemar_exact_p"] is None and pair["mcnemar_holm_p"] is None
    assert pair["without_replacements"]["mcnemar_exact_p"] is None
    report = paths.markdown.read_text(encoding="utf-8")
    assert report.splitlines()[0].endswith("— screening (no p value)")
    assert "**Stage:** screening (no p value): one campaign pair" in report
    assert "no comparison is tested and no p value is shown" in report
    assert "p = " not in report and "p < " not in report


def test_a_confirmation_report_tests_the_declared_comparison(tmp_path: Path) -> None:
    exp = campaign_experiment(tmp_path)
    approved_plan(exp, tmp_path / "plan.json", 5)
    outcome = start_run(exp, tmp_path / "runs", plan=tmp_path / "plan.json")
    paths = write_report(outcome.run_dir)
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    assert summary["run"]["stage"] == "confirmation"
    assert summary["pairs"][0]["mcnemar_exact_p"] is not None
    report = paths.markdown.read_text(encoding="utf-8")
    assert "**Stage:** confirmation" in report and "screening (no p value)" not in report
    # The plan line names the screening it came from, and who approved it.
    assert "approved by Ada at 2026-01-02T00:00:00Z, from screening run camp-" in report
