"""The demo study end to end: real stdio and streamable-HTTP MCP, the CLI, the report."""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from helpers.common import cli, cli_here
from helpers.demo_numbers import assert_same_numbers
from helpers.report_checks import (
    check_declared_plots,
    check_renders_offline_without_wrapping,
    figures_in,
)
from pairbench import TrialResult, load_run
from pairbench.store import RunDir
from pairbench.store._load_run import read_run_info

pytestmark = pytest.mark.whole_run

TOOL_TIERS = {"1", "2"}

Demo = tuple[subprocess.CompletedProcess[str], list[TrialResult], Path]
"""The demo's CLI result, its trial results and its run folder."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    root = tmp_path_factory.mktemp("demo")
    done = cli("demo", "--runs-dir", str(root / "runs"), "--run-seed", "1", cwd=root)
    run_dir = next((root / "runs").iterdir())
    return done, load_run(run_dir).results, run_dir


def test_demo_exits_zero_and_prints_the_report_path(demo: Demo) -> None:
    done, results, run_dir = demo
    assert done.returncode == 0, done.stderr
    assert f"Report: {run_dir / 'report.md'}" in done.stdout.replace("\n", "")
    assert (run_dir / "report.html").is_file() and (run_dir / "summary.json").is_file()
    assert len(results) == 81  # 9 tasks x 3 trials x 3 arms


def test_the_demo_in_place_leaves_no_ledger_inside_pairbench(demo: Demo) -> None:
    # The built-in study ran where pairbench is installed (maybe read-only): its lock keeps
    # no ledger there; a team's copy (pairbench init) gets one beside its own lock.
    from pairbench.studies.mcp_transports import STUDY

    _, _, run_dir = demo
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert info["lock_sha256"] and "ledger" not in info
    assert not (STUDY.root / "experiment.ledger.jsonl").exists()


def test_the_demo_gives_the_numbers_it_gave_before_the_studies_became_plugins(demo: Demo) -> None:
    # Issue 31 moved every study's code out of the core with no behaviour change: the numbers
    # this seed decides were recorded before the move (helpers.demo_numbers).
    assert_same_numbers("mcp", demo[2])


def test_baseline_fails_tool_tasks_that_both_transports_pass(demo: Demo) -> None:
    _, results, _ = demo
    for result in results:
        if str(result.labels.get("tier")) not in TOOL_TIERS:
            continue
        if result.arm == "baseline":
            assert result.outcome in {"failed", "parse_failure"}, result
        else:
            assert result.outcome == "passed", (result.arm, result.task, result.reason)


def test_answers_differ_across_trials_and_agree_within_a_pair(demo: Demo) -> None:
    _, results, _ = demo
    answers: dict[tuple[str, str], dict[int, str | None]] = defaultdict(dict)
    for r in results:
        answers[(r.arm, r.task)][r.trial] = r.final_answer
    for task in ("read-issue-title", "read-file-line"):
        stdio = answers[("local-stdio", task)]
        assert len(set(stdio.values())) == 3, f"{task}: answers repeat across trials: {stdio}"
        assert stdio == answers[("remote-http", task)], "a pair saw different content"


def test_client_latency_is_never_below_the_server_duration(demo: Demo) -> None:
    _, results, _ = demo
    checked = 0
    for r in results:
        assert r.metrics is not None
        for call in r.metrics.tool_calls:
            if call.server_ms is not None and call.client_ms is not None:
                assert call.client_ms >= call.server_ms, (r.arm, r.task, call)
                checked += 1
    assert checked >= 50


def test_tokens_are_not_measured_and_never_zero(demo: Demo) -> None:
    _, results, run_dir = demo
    for r in results:
        assert r.metrics is not None
        for metric in (r.metrics.input_tokens, r.metrics.output_tokens, r.metrics.cost_usd):
            assert metric.provenance == "missing" and metric.value is None
    assert "not measured" in (run_dir / "report.md").read_text(encoding="utf-8")


def test_transport_metrics_are_recorded_per_arm(demo: Demo) -> None:
    _, results, run_dir = demo
    for r in results:
        assert r.metrics is not None
        if r.arm == "baseline":
            assert r.metrics.connect_ms == {} and r.metrics.tool_calls == []
        else:
            assert r.metrics.connect_ms["tracker"].provenance == "measured"
            assert r.metrics.tool_calls, (r.arm, r.task)
            assert r.validity is not None and r.validity.valid
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["schema_id"] == "pairbench.summary/3"


def test_security_probes_in_the_demo(demo: Demo) -> None:
    _, results, _ = demo
    for r in results:
        assert r.security is not None and not r.security.secret_in_output
        if r.task in {"injection-summary", "lure-comment-author"}:
            expected = None if r.arm == "baseline" else False
            assert r.security.prompt_injection_compliance is expected, (r.arm, r.task)
        else:
            assert r.security.prompt_injection_compliance is None


def test_run_json_records_the_plan_before_results(demo: Demo) -> None:
    _, _, run_dir = demo
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert "status" not in info  # written once, before the first attempt
    assert read_run_info(RunDir.open(run_dir)).status == "complete"  # a journal event
    assert info["run_seed"] == 1
    assert len(info["schedule"]["pairs"]) == 27
    assert info["schedule"]["pairs"][0]["order"] != info["schedule"]["pairs"][1]["order"]


def test_init_copies_a_study_that_runs_unchanged(tmp_path: Path) -> None:
    made = cli_here("init", "exp", "--from", "mcp-transports", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "exp" / "experiment.yaml").is_file()
    assert (tmp_path / "exp" / "protocol.md").is_file()
    checked = cli_here("check", "exp/experiment.yaml", cwd=tmp_path)
    assert checked.returncode == 0 and "ok" in checked.stdout
    again = cli_here("init", "exp", "--from", "mcp-transports", cwd=tmp_path)
    assert again.returncode != 0 and "not empty" in again.stderr
    # Unchanged: every file of the copy is the built-in study's, byte for byte (the demo
    # fixture runs that study whole). The copy then runs from its own folder, its prompts,
    # plans and servers found there; one trial per task (27) is enough to show that.
    from pairbench.studies.mcp_transports import STUDY

    built_in = STUDY.experiment_path.parent
    copied = sorted(p.relative_to(tmp_path / "exp") for p in (tmp_path / "exp").rglob("*"))
    assert copied and all(
        (built_in / rel).read_bytes() == (tmp_path / "exp" / rel).read_bytes()
        for rel in copied
        if (tmp_path / "exp" / rel).is_file()
    )
    exp = tmp_path / "exp" / "experiment.yaml"
    exp.write_text(exp.read_text("utf-8").replace("\ntrials: 3\n", "\ntrials: 1\n"), "utf-8")
    # The copy's lock no longer matches: refused unless the change is accepted by name.
    refused = cli_here("run", "exp/experiment.yaml", "--run-seed", "2", cwd=tmp_path)
    assert refused.returncode != 0 and "--accept-change experiment" in refused.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    ran = cli_here(
        "run", "exp/experiment.yaml", "--run-seed", "2", "--accept-change", "experiment",
        cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    run_dir = next((tmp_path / "runs").iterdir())
    results = load_run(run_dir).results
    assert len(results) == 27 and "infra" not in {r.outcome for r in results}
    assert sum(r.outcome == "passed" for r in results) >= 18  # every arm with tools passes


def test_studies_lists_the_builtin(tmp_path: Path) -> None:
    listed = cli_here("studies", cwd=tmp_path)
    assert listed.returncode == 0 and "mcp-transports" in listed.stdout


def test_plan_json_shows_seeds_order_and_cost(tmp_path: Path) -> None:
    from pairbench.studies.mcp_transports import STUDY

    shown = cli_here("plan", str(STUDY.experiment_path), "--run-seed", "1", "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["planned_trials"] == 81 and data["pairs"] == 27
    assert data["cost"]["projected_usd"] is None
    again = json.loads(
        cli_here(
            "plan", str(STUDY.experiment_path), "--run-seed", "1", "--json", cwd=tmp_path
        ).stdout
    )
    assert again["schedule"] == data["schedule"]


def test_the_report_draws_its_declared_plots_and_fits_the_page(demo: Demo, tmp_path: Path) -> None:
    _, _, run_dir = demo
    summary = check_declared_plots(run_dir)
    assert figures_in((run_dir / "report.html").read_text(encoding="utf-8")) == [
        "success",
        "latency",
        "task-heatmap",
        "transport",
    ]  # fmt: skip - tokens: the scripted agent has no model (said in a sentence instead)
    assert summary["latency"]["arms"][1]["n"] == 27
    check_renders_offline_without_wrapping(run_dir, tmp_path / "report.png")
