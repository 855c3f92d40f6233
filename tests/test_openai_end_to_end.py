"""mcp-transports with the openai agent against the local Chat Completions double.

Real parts only: the double is real HTTP on loopback, the tracker is the real MCP server over
stdio (spawned per trial) and streamable HTTP (one warm server), and the run goes through
``pairbench.start_run`` and ``pairbench.write_report``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.common import edit_experiment, study_copy, task_named
from pairbench import load_run, start_run, write_report
from pairbench.testing.chat_double import start_chat_double

pytestmark = pytest.mark.whole_run

TASKS = ("read-issue-title", "count-open-label", "read-file-line", "open-issue")
TOOL_FOR = {
    "read-issue-title": "get_issue",
    "count-open-label": "list_issues",
    "read-file-line": "read_file",
    "open-issue": "create_issue",
}
TOOL_ARMS = ("local-stdio", "remote-http")


def _experiment(tmp_path: Path, url: str, tasks: tuple[str, ...], trials: int) -> Path:
    exp = study_copy(tmp_path)
    edit_experiment(
        exp,
        trials=trials,
        tasks=[task_named(exp, t) for t in tasks],
        agent={"adapter": "openai", "settings": {"base_url": f"{url}/v1", "model": "double"}},
    )
    return exp


def _audit(run_dir: Path, arm: str, task: str, trial: int) -> list[dict[str, Any]]:
    path = run_dir / "fixtures" / arm / task / f"{trial}.1" / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_mcp_transports_with_the_openai_agent_over_both_transports(tmp_path: Path) -> None:
    with start_chat_double({"rate_limit_on": [7]}) as double:
        exp = _experiment(tmp_path, double.url, TASKS, trials=2)
        outcome = start_run(exp, tmp_path / "runs", run_seed=11)
        usages = double.usages
        exchanges = double.exchanges
    assert outcome.status == "complete"
    paths = write_report(outcome.run_dir)
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    results = outcome.results
    assert len(results) == 3 * len(TASKS) * 2
    by_outcome = {r.outcome for r in results}
    assert by_outcome <= {"passed", "failed", "parse_failure", "agent_error"}

    # Exactly one request was rate limited: it is one listed agent_error, not a crash.
    assert [e.status for e in exchanges].count(429) == 1
    errors = [r for r in results if r.outcome == "agent_error"]
    assert len(errors) == 1 and errors[0].reason.startswith("rate limited (429): ")
    listed = summary["attention"]["agent_error"]
    assert [(e["arm"], e["task"], e["trial"]) for e in listed] == [
        (errors[0].arm, errors[0].task, errors[0].trial)
    ]
    assert listed[0]["reason"].startswith("rate limited (429)")

    for r in results:
        if r.outcome == "agent_error":
            continue
        if r.arm == "baseline":  # no tools: "I cannot reach the tracker" (no number to parse)
            expected = "parse_failure" if r.task == "count-open-label" else "failed"
            assert r.outcome == expected, (r.task, r.reason)
            assert _audit(outcome.run_dir, r.arm, r.task, r.trial) == []
            continue
        # Tool arms pass (tier 1 and open-issue), and the model's calls reached the server.
        assert r.outcome == "passed", (r.arm, r.task, r.reason, r.final_answer)
        audit = _audit(outcome.run_dir, r.arm, r.task, r.trial)
        assert [entry["tool"] for entry in audit] == [TOOL_FOR[r.task]], (r.arm, r.task)
        assert r.validity is not None and r.validity.valid
        assert r.seeding is not None and r.seeding.status == "seeded"
        assert r.seeding.model_seed == r.model_seed
    tool_arm_passes = {(r.arm, r.task) for r in results if r.outcome == "passed"}
    assert {(a, t) for a in TOOL_ARMS for t in TASKS} <= tool_arm_passes | {
        (e.arm, e.task) for e in errors
    }

    # Usage: per-trial measured tokens, and the summary's totals, equal what the double returned.
    prompt = sum(u["prompt_tokens"] for u in usages)
    completion = sum(u["completion_tokens"] for u in usages)
    # The rate-limited trial is measured only if a response completed before its 429 (which
    # request gets the 429 depends on scheduling); every other trial is measured.
    assert all(
        r.metrics and r.metrics.input_tokens.provenance == "measured"
        for r in results
        if r.outcome != "agent_error"
    )
    assert all(r.metrics and r.metrics.input_tokens.provenance != "estimated" for r in errors)
    assert sum(r.metrics.input_tokens.value or 0 for r in results if r.metrics) == prompt
    assert sum(r.metrics.output_tokens.value or 0 for r in results if r.metrics) == completion
    cost = {row["arm"]: row for row in summary["cost"]}
    assert sum(cost[a]["input_tokens"]["measured"]["total"] for a in cost) == prompt
    assert sum(cost[a]["output_tokens"]["measured"]["total"] for a in cost) == completion
    assert cost["local-stdio"]["input_tokens"]["measured"]["sources"] == [
        "127.0.0.1 usage (chat.completions)"
    ]
    assert all(cost[a]["cost_usd"]["measured"]["n"] == 0 for a in cost)
    assert all(cost[a]["cost_usd"]["missing"]["n"] == 2 * len(TASKS) for a in cost)


def test_an_auth_failure_stops_the_run_after_one_retry(tmp_path: Path) -> None:
    with start_chat_double({"fail_auth": True}) as double:
        exp = _experiment(tmp_path, double.url, ("read-issue-title",), trials=2)
        outcome = start_run(exp, tmp_path / "runs", run_seed=12, concurrency=1)
        requests = len(double.requests)
    assert outcome.status.startswith("stopped: ")
    assert "the model provider rejected authentication (401)" in outcome.status
    assert requests == 2  # the first attempt and its one retry; nothing after the stop
    run = load_run(outcome.run_dir)
    assert [r.outcome for r in run.infra] == ["infra", "infra"]
    assert all("rejected authentication" in r.reason for r in run.infra)
    assert not any(r.outcome == "passed" for r in run.results)
    summary = json.loads(write_report(outcome.run_dir).summary.read_text(encoding="utf-8"))
    assert summary["attention"]["infra_attempts"] == 2
