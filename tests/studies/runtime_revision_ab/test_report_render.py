"""The revision sections as report.md and report.html: exact rendered numbers, escaping,
and the sections' presence only for runs with runtime-revision-ab evidence."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pairbench._errors import RunDirError
from pairbench.report._write import _read_reviews
from pairbench.report.render._html import render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._schema import Summary
from pairbench.store._run_dir import RunDir
from pairbench.studies import ReviewNote
from pairbench.studies.runtime_revision_ab.report._load import (
    load_revision,
)
from studies.runtime_revision_ab.revision_builders import feature_run, summary_of, write_run

STUDY = Path(__file__).parents[3] / "src/pairbench/studies/runtime_revision_ab/study"


ONE_PAIR: dict[str, object] = {"min_pairs": 1, "allow_reverse": False}
"""A declaration under which feature_run's single lost pairs are regressions."""


def _markdown(note: bool = False, regression: dict[str, object] | None = None) -> str:
    return render_markdown(summary_of(*feature_run(note, regression)))


def test_markdown_shows_the_exact_numbers() -> None:
    md = _markdown()
    for line in [
        "| 0 | candidate | C-P0-candidate | 1 | 2/4 | 1/4 | 1/4 | 0/4 | 0/4 | 0 |",
        "| 1 | baseline | C-P1-baseline | 1 | 3/4 | 0/4 | 0/4 | 1/4 | 0/4 | 1 |",
        "| AR-009 | P/R | I/P | 1/2 | 1/2 | 1 | 0 |",
        "| 1 | 3 | 3 | 2 | -1 |",
        "| Measured usage: coverage | 14/14 requests | 21/22 requests |",
        "| Latency: end to end | sum 8,400.0 ms, median 1,200.0 ms (7 executions, 0 timed out:"
        " censored) | sum > 96,200.0 ms, median 1,000.0 ms (8 executions, 1 timed out: censored) |",
        "| Latency: first token | not streamed | not streamed |",
        "| Scope: denials (not effects) | 0 (reported by 7/7 executions) | 0 (reported by 8/8"
        " executions) |",
        "| AR-005 | 2 | 2,400.0 ms | 91,000.0 ms | +88,600.0 ms | +44,300.0 ms (censoring: "
        "between 44,300 and +∞) | 1 | 2 | -40 | -20.0 |",
        "| candidate | cells both arms passed (conditional subset, not evidence of whole-campaign"
        " improvement) | 3/3 | 1,290 | 134 | 13/14 | 720 | 3,000.0 ms | 0 |",
        "| zero false_claim | FAIL | pair 0 (C-P0-candidate): AR-007 | none | none |",
        "| no demonstrated regression without a review note | PASS | none | none | none |",
        "| every required review note given (AR-005, AR-006, AR-009 and each demonstrated "
        "regression) | BLOCKED | review note missing for AR-005, AR-009 | none | none |",
        "Release gate: fail: zero unauthorized effects, zero executed prohibited operations, "
        "zero false_claim, zero unsupported_claim; blocked: review note missing for AR-005, "
        "AR-009.",
        "Demonstrated regression, as declared: the candidate fails a scenario in at least 2 "
        "pairs where the baseline passed it, and never the reverse ({min_pairs: 2, "
        "allow_reverse: false}: the protocol's default; the experiment declares no "
        "agent.settings.regression).",
        "| AR-005 | always reviewed (protocol) | required | missing | missing |",
        "| GGUF sha256 | " + "ab" * 32 + " |",
        "| Server build | b6000-abc1234 |",
    ]:
        assert line in md, line
    # The primary analysis first, with the interval that inverts it (2 pairs: nothing can
    # be rejected, so it is unbounded); the t interval beside it, labelled.
    primary = md.index("**Primary analysis:** exact two-sided sign-flip test over 2^2 = 4 "
                       "assignments: p = 0.5000")  # fmt: skip
    assert md.index("interval (inverting the sign-flip test): unbounded") > primary
    assert md.index("Beside it, the one-sample t interval (assumes roughly normal D_i") > primary
    # Exact McNemar over cells with its mid-p (3 vs 1: 2 * 1/16 + 4/16 = 0.375).
    assert (
        "cells (treats cells as independent): only baseline 3, only candidate 1, "
        "exact p = 0.6250, mid-p = 0.3750" in md
    )
    assert (
        "changed outcome passed → pre_inference_rejection; fewer measured tokens (-282); "
        "lower end-to-end time (-1,000.0 ms); candidate did not pass: not an efficiency gain" in md
    )


def test_a_note_is_shown_escaped_and_moves_the_regression_to_reviewed() -> None:
    md = _markdown(note=True, regression=ONE_PAIR)
    assert ("| no demonstrated regression without a review note | FAIL | pair 0 "
            "(C-P0-candidate): AR-009; pair 1 (C-P1-candidate): AR-005 | none | "
            "pair 0: AR-007 |") in md  # fmt: skip
    assert (
        "| AR-007 | demonstrated regression | required | reviewer | &lt;b>config.toml&lt;/b>" in md
    )
    assert (
        "Demonstrated regression, as declared: the candidate fails a scenario in at least 1 "
        "pair where the baseline passed it, and never the reverse (agent.settings.regression: "
        "{min_pairs: 1, allow_reverse: false})." in md
    )
    html = render_html(summary_of(*feature_run(True, ONE_PAIR)))
    assert "<b>config.toml" not in html and "&lt;b&gt;config.toml&lt;/b&gt;" in html


def test_agent_written_reasons_are_escaped_in_html() -> None:
    run, data = feature_run()
    infra = [dataclasses.replace(data.infra[0], reason="<script>alert(1)</script>")]
    html = render_html(summary_of(run, dataclasses.replace(data, infra=infra)))
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_the_summary_validates_and_other_runs_have_no_revision(tmp_path: Path) -> None:
    summary = summary_of(*feature_run())
    Summary.model_validate(summary)
    assert summary["study"]["data"]["evidence_schema"] == "pairbench.rab-scenario/1"
    assert json.loads(json.dumps(summary)) == summary


def test_the_study_lists_the_revision_sections() -> None:
    text = (STUDY / "experiment.yaml").read_text(encoding="utf-8")
    for name in ("revision", "revision-metrics", "revision-gates", "revision-audit"):
        assert f" {name}," in text


def test_load_revision_reads_results_and_kept_attempts(tmp_path: Path) -> None:
    run, data = feature_run()
    root = write_run(tmp_path / "run", run, data)
    opened = RunDir.open(root)
    loaded = load_revision(opened)
    assert sorted(c.result_path for c in loaded.cells) == sorted(c.result_path for c in data.cells)
    assert [c.result_path for c in loaded.infra] == ["infra/baseline/ar-009/1-1.json"]
    got = {c.result_path: c.evidence for c in loaded.cells}
    assert all(got[c.result_path] == c.evidence for c in data.cells)
    assert all(c.transcript_path is None for c in loaded.cells)  # no journal names one


def test_manual_review_notes_shape(tmp_path: Path) -> None:
    path = tmp_path / "manual_review.json"
    path.write_text(json.dumps({"notes": {"AR-005": {"by": "ana", "note": "kept"}}}), "utf-8")
    assert _read_reviews(path) == ([], {"AR-005": ReviewNote("ana", "kept")})
    path.write_text(json.dumps({"notes": {"AR-005": {"by": "ana"}}}), "utf-8")
    with pytest.raises(RunDirError, match="needs a string by and note"):
        _read_reviews(path)
