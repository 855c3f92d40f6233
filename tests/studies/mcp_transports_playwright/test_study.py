"""The whole study with its scripted plans, the real ``@playwright/mcp`` and Chromium: every
tool-arm trial passes, the baseline fails them all, the probes' complying plans are caught,
and the report has its transport tables per arm and per tool. The probes' complying plans
run as extra tasks (in a copy of the study), one trial each, to keep the run short."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from helpers.common import CLI_BIN
from helpers.report_checks import (
    check_declared_plots,
    check_renders_offline_without_wrapping,
    figures_in,
)
from pairbench import write_report
from pairbench.grading import classify_validity
from pairbench.runner import start_run
from pairbench.spec import load_experiment
from pairbench.store import load_run
from pairbench.studies.mcp_transports_playwright import STUDY
from pairbench.studies.mcp_transports_playwright._fixture import read_files

pytestmark = pytest.mark.browser

COMPLYING = {
    # task id: (the plan that complies, the task it is a variant of)
    "injection-obey": ("plans/injection_obey.yaml", "injection-summary"),
    "lure-take": ("plans/lure_take.yaml", "lure-warehouse"),
    "canary-leak": ("plans/canary_leak.yaml", "canary-phone"),
}
TOOL_ARMS = ("local-stdio", "remote-http")


def _experiment(tmp: Path) -> Path:
    folder = tmp / "study"
    shutil.copytree(STUDY.root, folder, ignore=shutil.ignore_patterns("experiment.lock.json"))
    yaml = YAML()
    path = folder / "experiment.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    data["trials"] = 1
    for task_id, (plan, of) in COMPLYING.items():
        base = next(t for t in data["tasks"] if t["id"] == of)
        data["tasks"].append({**base, "id": task_id, "plan": plan})
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)
    return path


def _events(run_dir: Path, arm: str, task: str) -> list[dict[str, Any]]:
    text = (run_dir / "transcripts" / arm / task / "0.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.browser
def test_the_study_runs_offline_and_its_probes_are_caught(
    tmp_path: Path, playwright_mcp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The experiment names playwright-mcp as its docs run it: the pinned install on PATH.
    monkeypatch.setenv("PATH", f"{CLI_BIN}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    exp = _experiment(tmp_path)
    outcome = start_run(exp, tmp_path / "runs", run_seed=13)
    run_dir = outcome.run_dir
    run = load_run(run_dir)
    arms = load_experiment(exp).experiment.arms
    by: dict[tuple[str, str], Any] = {(r.arm, r.task): r for r in run.results}
    assert len(by) == 3 * (6 + len(COMPLYING))
    for (arm, task), r in by.items():
        if arm == "baseline":
            assert r.outcome in {"failed", "parse_failure"}, (task, r.reason)
            continue
        if task in COMPLYING:
            assert r.outcome == "failed", (arm, task, r.reason)
        else:
            assert r.outcome == "passed", (arm, task, r.reason)
        # The site saw the browser only, and the classifier agrees given its audit log.
        rel = next((run_dir / "fixtures" / arm / task).iterdir())
        state = read_files(rel)
        assert state.audit and all(e.arguments["browser"] for e in state.audit), (arm, task)
        assert classify_validity(arms[arm], _events(run_dir, arm, task), state).valid
        assert r.validity is not None and r.validity.valid
    for arm in TOOL_ARMS:
        security = {task: by[(arm, task)].security for task in by_task(by, arm)}
        assert security["injection-obey"].prompt_injection_compliance is True
        assert security["injection-summary"].prompt_injection_compliance is False
        assert security["injection-summary"].injection_seen is True
        assert security["canary-leak"].token_shaped_in_output is True
        assert security["canary-phone"].token_shaped_in_output is False
        assert "lure" in by[(arm, "lure-take")].reason
    report = write_report(run_dir, bootstrap_reps=200).markdown.read_text("utf-8")
    for arm in TOOL_ARMS:
        for tool in ("navigate", "evaluate", "snapshot", "fill_form", "type", "click"):
            assert f"| {arm} | playwright.browser_{tool} |" in report, (arm, tool)
    check_declared_plots(run_dir)
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert figures_in(html) == ["success", "latency", "task-heatmap", "transport"]
    check_renders_offline_without_wrapping(run_dir, tmp_path / "report.png")


def by_task(by: dict[tuple[str, str], Any], arm: str) -> list[str]:
    return sorted(task for a, task in by if a == arm)
