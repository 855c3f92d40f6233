"""The webmcp-vs-pdf study folder, its lock, its offline agent, and the demo end to end:
the webmcp arm's calls go through real headless Chromium, the pdf arm reads the real PDF.

The end-to-end test skips loudly outside CI when Chromium >= 156 is missing; under
``CI=true`` it fails instead.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers.common import cli, skip_outside_ci
from helpers.demo_numbers import assert_same_numbers
from helpers.report_checks import (
    check_declared_plots,
    check_renders_offline_without_wrapping,
    figures_in,
)
from pairbench import _registry
from pairbench.fixtures._webmcp import chromium_problem
from pairbench.freeze._verify import verify_experiment
from pairbench.spec import Tools, load_experiment
from pairbench.store import TrialResult, load_run
from pairbench.studies.webmcp_vs_pdf import PDF_PATH, STUDY, load_dataset
from pairbench.studies.webmcp_vs_pdf._agent import _read_pdf, table_from_pdf_text
from pairbench.studies.webmcp_vs_pdf._page import NO_RUNS
from pairbench.studies.webmcp_vs_pdf._people import people_page

pytestmark = pytest.mark.browser

SHARED_PROTOCOL = Path("/work/shared/protocols/webmcp-vs-pdf.md")


def _prompt_block(protocol: str) -> str:
    found = re.search(r"## Common prompt\n.*?```text\n(.*?)\n```", protocol, re.S)
    assert found, "the protocol has no common prompt block"
    return found.group(1)


def test_the_experiment_has_the_protocols_shape() -> None:
    exp = load_experiment(STUDY.experiment_path).experiment
    assert exp.id == "webmcp-vs-pdf" and exp.trials == 5 and exp.order == "alternate"
    assert exp.comparisons == [("pdf", "webmcp")] and exp.protocol == "protocol.md"
    pdf, web = exp.arms["pdf"], exp.arms["webmcp"]
    assert pdf.tools == "none" and pdf.attachments == ["benchmark-baseline.pdf"]
    assert isinstance(web.tools, Tools) and not web.attachments and not web.tools.mcp
    page = web.tools.webmcp["page"]
    assert page.serve == ["python3", "-m", "pairbench.studies.webmcp_vs_pdf.site"]
    assert page.path == "/"
    (task,) = exp.tasks
    assert task.grader.name == "webmcp-answer" and task.fixture is None
    assert {"page/index.html", "data/raudenbush1985.csv", "benchmark-baseline.pdf"} <= set(
        exp.files
    )
    assert "webmcp-vs-pdf" in _registry.names("studies")
    assert "webmcp-vs-pdf-scripted" in _registry.names("agents")


def test_the_prompt_is_the_protocols_common_prompt_verbatim() -> None:
    prompt = (STUDY.root / "prompts" / "common.md").read_text(encoding="utf-8")
    ours = _prompt_block((STUDY.root / "protocol.md").read_text(encoding="utf-8"))
    assert prompt == ours + "\n"
    if SHARED_PROTOCOL.exists():
        assert ours == _prompt_block(SHARED_PROTOCOL.read_text(encoding="utf-8"))


def test_the_shipped_lock_matches_the_study_files() -> None:
    mismatches = verify_experiment(STUDY.experiment_path)
    # A change of pairbench elsewhere (the harness) alone must not fail this test.
    assert [m for m in mismatches if m.kind != "harness"] == [], mismatches


def test_the_pdf_agent_reads_the_table_out_of_the_pdf() -> None:
    rows = table_from_pdf_text(_read_pdf(PDF_PATH))
    assert rows == [(r.record, r.yi, r.vi) for r in load_dataset()]
    assert table_from_pdf_text("no table here\ns01\nonly") == []


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    problem = chromium_problem()
    if problem is not None:
        skip_outside_ci(f"the webmcp-vs-pdf demo: {problem}")
    root = tmp_path_factory.mktemp("demo")
    assert NO_RUNS in people_page(root / "runs")  # before any run
    runs = str(root / "runs")
    done = cli("demo", "--study", "webmcp-vs-pdf", "--runs-dir", runs, "--run-seed", "7", cwd=root)
    assert done.returncode == 0, done.stderr
    return done, next((root / "runs").iterdir())


def _by_arm(run_dir: Path) -> dict[str, list[TrialResult]]:
    results = load_run(run_dir).results
    return {arm: [r for r in results if r.arm == arm] for arm in ("pdf", "webmcp")}


def _transcript(run_dir: Path, r: TrialResult) -> list[dict[str, Any]]:
    path = run_dir / "transcripts" / r.arm / r.task / f"{r.trial}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_demo_gives_the_numbers_it_gave_before_the_studies_became_plugins(
    demo: tuple[object, Path],
) -> None:
    assert_same_numbers("webmcp", demo[1])  # recorded before issue 31's moves, seed 7


def test_the_demo_scores_13_of_13_in_both_arms(demo: tuple[object, Path]) -> None:
    _, run_dir = demo
    arms = _by_arm(run_dir)
    for arm, results in arms.items():
        assert len(results) == 5, arm
        for r in results:
            assert r.outcome == "passed", (arm, r.reason)
            assert r.grade is not None and r.grade.details["correct"] == 13
            assert r.validity is not None and r.validity.valid
    # Alternating order across replicate pairs: each arm goes first in some pairs.
    firsts = {r.start_order for r in arms["pdf"]}
    assert firsts == {0, 1}


def test_the_webmcp_arm_called_the_page_through_chromium(demo: tuple[object, Path]) -> None:
    _, run_dir = demo
    for r in _by_arm(run_dir)["webmcp"]:
        lines = _transcript(run_dir, r)
        (connect,) = [e for e in lines if e["kind"] == "mcp_connect"]
        assert connect["transport"] == "webmcp" and connect["ok"] is True
        assert int(connect["browser"].split(".")[0]) >= 156
        calls = [e for e in lines if e["kind"] == "tool_call"]
        assert [c["tool"] for c in calls] == [
            "get_dataset",
            "fit_random_effects",
            "fit_random_effects",
            "egger_test",
        ]
        results = [e for e in lines if e["kind"] == "tool_result"]
        assert len(results) == 4 and not any(e["is_error"] for e in results)
    for r in _by_arm(run_dir)["pdf"]:
        kinds = [e["kind"] for e in _transcript(run_dir, r)]
        assert "tool_call" not in kinds and "mcp_connect" not in kinds
        assert "attachments" in kinds


def test_the_peoples_page_shows_the_runs_per_arm_k_of_n(demo: tuple[object, Path]) -> None:
    _, run_dir = demo
    page = people_page(run_dir.parent)
    assert NO_RUNS not in page and run_dir.name in page
    for arm in ("pdf", "webmcp"):
        assert f'<tr data-arm="{arm}"><td>{arm}</td>\n<td class="kn">5/5</td>' in page


def test_the_report_fits_the_study(demo: tuple[object, Path], tmp_path: Path) -> None:
    _, run_dir = demo
    summary = check_declared_plots(run_dir)
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert figures_in(html) == ["success", "latency", "fields"]
    # No MCP transport, no injection probe: those sections are not shown at all.
    assert "<h2>Transport</h2>" not in html and "<h2>Security</h2>" not in html
    assert len(summary["fields"]) == 13
    assert "<h2>Accuracy per field</h2>" in html and "<h2>Why trials failed</h2>" in html
    check_renders_offline_without_wrapping(run_dir, tmp_path / "report.png")
