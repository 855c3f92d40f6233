"""mcp-transports with the claude-code and codex agents (fake CLIs) through the real runner.

The fakes are installed as executables on the arm's scrubbed PATH (or named by an absolute
``settings.executable``), connect to the fixture's tracker over stdio and streamable HTTP with
the official ``mcp`` client, and really call tools: the calls must reach the fixture's audit
log, tier-1 answers must pass, every trial must stay on its surface, usage must be measured
and seeding unseeded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from _helpers import edit_experiment, study_copy, task_named
from pairbench import TrialResult, start_run

SRC = str(Path(__file__).resolve().parents[1] / "src")
TASKS = ("read-issue-title", "count-open-label", "read-file-line")
EXPECTED_TOOL = {
    "read-issue-title": "get_issue",
    "count-open-label": "list_issues",
    "read-file-line": "read_file",
}


def _install(tmp_path: Path, name: str, module: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / name
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m {module} "$@"\n', encoding="utf-8")
    exe.chmod(0o755)
    return exe


def _agent(tmp_path: Path, adapter: str) -> dict[str, Any]:
    if adapter == "claude-code":  # found as `claude` on the arm's PATH
        _install(tmp_path, "claude", "pairbench.testing.fake_claude")
        path = f"{tmp_path / 'bin'}:/usr/bin:/bin"
        return {
            "adapter": "claude-code",
            "settings": {"model": "sonnet", "max_turns": 10},
            "env": {"PATH": path, "PYTHONPATH": SRC},
        }
    exe = _install(tmp_path, "codex", "pairbench.testing.fake_codex")  # an absolute path
    return {
        "adapter": "codex",
        "settings": {"model": "gpt-5.5", "executable": str(exe)},
        "env": {"PYTHONPATH": SRC},
    }


def _audit(run_dir: Path, result: TrialResult) -> list[dict[str, Any]]:
    found = sorted((run_dir / "fixtures" / result.arm / result.task).glob("*/audit.jsonl"))
    return [json.loads(line) for p in found for line in p.read_text().splitlines()]


@pytest.mark.parametrize("adapter", ["claude-code", "codex"])
def test_mcp_transports_with_a_cli_agent(tmp_path: Path, adapter: str) -> None:
    exp = study_copy(tmp_path)
    edit_experiment(
        exp,
        trials=1,
        tasks=[task_named(exp, t) for t in TASKS],
        agent=_agent(tmp_path, adapter),
        budget={"trial_timeout_s": 120, "concurrency": 3},
    )
    outcome = start_run(exp, tmp_path / "runs", run_seed=11)
    assert outcome.status == "complete", outcome.status
    results = {(r.arm, r.task): r for r in outcome.results}
    assert len(results) == 3 * len(TASKS)
    for (arm, task), r in results.items():
        assert r.agent == adapter
        assert r.seeding is not None and r.seeding.status == "unseeded"
        assert adapter.split("-")[0] in r.seeding.reason
        assert r.metrics is not None
        assert r.metrics.input_tokens.provenance == "measured", (arm, task)
        assert r.metrics.output_tokens.provenance == "measured"
        assert r.validity is not None and r.validity.valid, r.validity
        if arm == "baseline":
            assert r.outcome in ("failed", "parse_failure") and not r.metrics.tool_calls
            continue
        assert r.outcome == "passed", (arm, task, r.reason, r.final_answer)
        calls = r.metrics.tool_calls
        assert [c.tool for c in calls] == ["list_repositories", EXPECTED_TOOL[task]]
        assert all(c.server == "tracker" and c.client_ms and not c.is_error for c in calls)
        assert all(c.server_ms is not None for c in calls)  # matched in the audit log
        audited = [a["tool"] for a in _audit(outcome.run_dir, r)]
        assert audited == ["list_repositories", EXPECTED_TOOL[task]], (arm, task)
        assert r.metrics.transport_failures == 0
        if adapter == "claude-code":
            assert r.metrics.cost_usd.provenance == "estimated"
            assert r.metrics.agent_ms.provenance == "measured"
            assert "tracker" in r.metrics.connect_ms
        else:
            assert r.metrics.cost_usd.provenance == "missing"


def test_claude_auth_failure_stops_the_run_as_infra(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    agent = _agent(tmp_path, "claude-code")
    agent["env"]["FAKE_CLAUDE_SCENARIO"] = "auth_failure"
    edit_experiment(
        exp,
        trials=1,
        tasks=[task_named(exp, "read-issue-title")],
        agent=agent,
        arms={"a": {"tools": "none"}, "b": {"tools": "none"}},
        comparisons=[],
        budget={"trial_timeout_s": 60, "concurrency": 1},
    )
    outcome = start_run(exp, tmp_path / "runs", run_seed=12)
    assert outcome.status.startswith("stopped"), outcome.status
    assert "rejected authentication" in outcome.status
    assert all(r.outcome != "passed" for r in outcome.results)
    infra = list((outcome.run_dir / "infra").rglob("*.json"))
    assert len(infra) == 2  # the attempt and its one retry
