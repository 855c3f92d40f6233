"""Runner policies against real subprocesses: timeout, infra retry and stop, budget, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pairbench import load_run, resume_run, start_run
from pairbench.store import Journal, RunDir
from pairbench.store._events import AttemptFinished
from pairbench.store._load_run import read_run_info

pytestmark = pytest.mark.whole_run

ANSWER = "import sys; sys.stdin.read(); print('ok')"
SLEEPER = "import sys, time; sys.stdin.read(); time.sleep(60); print('late')"


def _experiment(root: Path, body: str, *, trials: int = 1, tasks: int = 1) -> Path:
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    listed = "\n".join(
        f"  - {{id: t{i}, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}"
        for i in range(tasks)
    )
    path = root / "experiment.yaml"
    path.write_text(
        f"id: policy\nversion: '1'\ntrials: {trials}\n{body}\ntasks:\n{listed}\n", encoding="utf-8"
    )
    return path


def _add_plan(exp: Path) -> None:
    text = exp.read_text(encoding="utf-8")
    exp.write_text(text.replace("prompt: p.md,", "prompt: p.md, plan: plan.yaml,"), "utf-8")


def _cmd(script: str) -> str:
    return json.dumps({"adapter": "command", "settings": {"command": ["python3", "-c", script]}})


def test_a_trial_over_its_time_limit_is_a_timeout_and_its_child_is_killed(tmp_path: Path) -> None:
    exp = _experiment(
        tmp_path,
        f"budget: {{trial_timeout_s: 1}}\nagent: {_cmd(SLEEPER)}\narms: {{a: {{}}, b: {{}}}}",
    )
    started = time.monotonic()
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    assert time.monotonic() - started < 30
    assert {r.outcome for r in outcome.results} == {"timeout"}
    assert all("timeout" in r.reason for r in outcome.results)
    # the autouse guard in conftest fails this test if the sleeping child survived


def test_infra_failure_is_kept_retried_once_then_stops_the_run(tmp_path: Path) -> None:
    broken = {"mcp": {"srv": {"transport": "stdio", "command": ["/nonexistent/server"]}}}
    arms = json.dumps({"a": {"tools": broken}, "b": {"tools": broken}})
    exp = _experiment(
        tmp_path,
        f"budget: {{concurrency: 1}}\nagent: {{adapter: scripted}}\narms: {arms}",
        tasks=3,
    )
    (tmp_path / "plan.yaml").write_text("steps: []\nanswer: ok\n", encoding="utf-8")
    text = exp.read_text(encoding="utf-8").replace(
        "prompt: p.md,", "prompt: p.md, plan: plan.yaml,"
    )
    exp.write_text(text, encoding="utf-8")
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    assert outcome.status.startswith("stopped: trial ")
    assert "failed for infrastructure reasons 2 times" in outcome.status
    kept = sorted((outcome.run_dir / "infra").rglob("*.json"))
    assert [p.name for p in kept] == ["0.1.json", "0.2.json"]
    assert json.loads(kept[0].read_text())["outcome"] == "infra"
    run = load_run(outcome.run_dir)
    assert not list((outcome.run_dir / "results").rglob("*.json"))
    assert {r.outcome for r in run.results} == {"not_run"}  # listed as misses, not hidden


def test_a_flaky_fixture_is_retried_once_and_the_trial_completes(tmp_path: Path) -> None:
    flag = tmp_path / "failed-once"
    flaky = (
        "import os, sys, runpy; f = sys.argv[1]\n"
        "if not os.path.exists(f):\n    open(f, 'w').close(); sys.exit(3)\n"
        "sys.argv = ['tracker']; runpy.run_module("
        "'pairbench.studies.mcp_transports.tracker_server', run_name='__main__')"
    )
    tools = {
        "mcp": {"tracker": {"transport": "stdio", "command": ["python3", "-c", flaky, str(flag)]}}
    }
    arms = json.dumps({"a": {"tools": tools}, "b": {"tools": "none"}})
    exp = _experiment(tmp_path, f"agent: {{adapter: scripted}}\narms: {arms}")
    (tmp_path / "plan.yaml").write_text(
        "steps: [{call: tracker.list_repositories}]\nanswer: ok\nwithout_tools: ok\n",
        encoding="utf-8",
    )
    text = exp.read_text(encoding="utf-8").replace(
        "prompt: p.md,", "prompt: p.md, plan: plan.yaml,"
    )
    exp.write_text(text, encoding="utf-8")
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    assert outcome.status == "complete"
    kept = list((outcome.run_dir / "infra").rglob("*.json"))
    assert len(kept) == 1
    result = next(r for r in outcome.results if r.arm == "a")
    assert result.attempt == 2 and result.outcome == "passed"


def test_budget_stop_marks_the_remaining_trials_not_run(tmp_path: Path) -> None:
    exp = _experiment(
        tmp_path,
        "budget: {concurrency: 1, cost_ceiling_usd: 0.05, cost_per_trial_usd: 0.02}\n"
        f"agent: {_cmd(ANSWER)}\narms: {{a: {{}}, b: {{}}}}",
        trials=3,
    )
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    outcomes = sorted(r.outcome for r in outcome.results)
    assert outcomes == ["not_run"] * 4 + ["passed"] * 2
    assert outcome.status.startswith("stopped: budget stop")
    assert all("ceiling" in r.reason for r in outcome.results if r.outcome == "not_run")


def test_sigint_interrupts_cleanly_and_resume_finishes(tmp_path: Path) -> None:
    slow = "import sys, time; sys.stdin.read(); time.sleep(0.5); print('ok')"
    exp = _experiment(
        tmp_path,
        f"budget: {{concurrency: 2}}\nagent: {_cmd(slow)}\narms: {{a: {{}}, b: {{}}}}",
        trials=3,
        tasks=2,
    )
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairbench", "run", str(exp), "--runs-dir", str(runs)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        dirs = list(runs.glob("policy-*")) if runs.exists() else []
        events = Journal.read(dirs[0] / "journal.jsonl") if dirs else []
        if sum(isinstance(e, AttemptFinished) for e in events) >= 2:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "pairbench resume" in err
    run_dir = next(runs.glob("policy-*"))
    assert read_run_info(RunDir.open(run_dir)).status == "interrupted"
    kept = list((run_dir / "interrupted").rglob("*.json"))
    assert kept, "the in-flight attempts were not kept as interrupted"
    finished = resume_run(run_dir)
    assert finished.status == "complete"
    assert sorted(r.outcome for r in finished.results) == ["passed"] * 12
