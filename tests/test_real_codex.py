"""mcp-transports with the REAL ``codex`` binary (npm ``@openai/codex``, pinned) through the
runner, against pairbench's local Responses API double.

What only the real binary shows, proven here: codex does not wait for a stdio MCP server
unless it is ``required`` (the adapter pins it); with no reachable provider it loops on
"Reconnecting... waiting for network" forever (the adapter stops it at the first such event:
``infra``, and the retry's second ``infra`` stops the run naming the URL).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from helpers.common import edit_experiment, real_cli, study_copy, task_named
from pairbench import load_run, start_run, write_report
from pairbench.testing.responses_double import start_responses_double

pytestmark = pytest.mark.cli

TASKS = (
    "read-issue-title",
    "count-open-label",
    "read-file-line",
    "open-issue",
    "add-label",
    "patch-file-line",
    "injection-summary",
    "lure-comment-author",
    "canary-comment",
)
TOOL_ARMS = ("local-stdio", "remote-http")


def codex_agent(url: str, *, retries: int | None = None) -> dict[str, Any]:
    """The ``codex`` agent pointed at a Responses endpoint through a custom provider."""
    config: dict[str, Any] = {
        "model_provider": "local",
        "model_providers.local.name": "local",
        "model_providers.local.base_url": f"{url}/v1",
        "model_providers.local.env_key": "OPENAI_API_KEY",
        "model_providers.local.wire_api": "responses",
    }
    if retries is not None:
        config["model_providers.local.request_max_retries"] = retries
        config["model_providers.local.stream_max_retries"] = retries
    return {
        "adapter": "codex",
        "settings": {"model": "test-model", "executable": str(real_cli("codex")), "config": config},
        "env": {"OPENAI_API_KEY": "test-key"},
    }


def _audit(run_dir: Path, arm: str, task: str) -> list[str]:
    found = sorted((run_dir / "fixtures" / arm / task).glob("*/audit.jsonl"))
    return [json.loads(line)["tool"] for p in found for line in p.read_text().splitlines()]


def test_real_codex_runs_all_nine_tasks_the_same_over_both_transports(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    with start_responses_double() as double:
        edit_experiment(
            exp,
            trials=1,
            tasks=[task_named(exp, t) for t in TASKS],
            agent=codex_agent(double.url),
            budget={"trial_timeout_s": 120, "concurrency": 2},
        )
        outcome = start_run(exp, tmp_path / "runs", run_seed=5)
        usages = list(double.usages)
    assert outcome.status == "complete", outcome.status
    results = {(r.arm, r.task): r for r in outcome.results}
    assert len(results) == 3 * len(TASKS)
    for task in TASKS:
        stdio, http = results["local-stdio", task], results["remote-http", task]
        assert stdio.outcome == http.outcome, (task, stdio.reason, http.reason)
        assert stdio.final_answer == http.final_answer, task
        assert _audit(outcome.run_dir, "local-stdio", task) == _audit(
            outcome.run_dir, "remote-http", task
        )
    for task in ("read-issue-title", "count-open-label", "read-file-line", "open-issue"):
        for arm in TOOL_ARMS:
            r = results[arm, task]
            assert r.outcome == "passed", (arm, task, r.reason, r.final_answer)
            assert r.metrics is not None and r.metrics.tool_calls
            assert _audit(outcome.run_dir, arm, task)  # the calls reached the tracker
        assert results["baseline", task].outcome != "passed"
    # Usage: what the double answered, summed per attempt, split into its parts.
    total_in = sum(u["input_tokens"] for u in usages)
    cached = sum(u["input_tokens_details"]["cached_tokens"] for u in usages)
    out = sum(u["output_tokens"] for u in usages)
    metrics = [r.metrics for r in outcome.results if r.metrics is not None]
    assert sum(m.input_tokens.value or 0 for m in metrics) == total_in
    assert sum(m.cache_read_input_tokens.value or 0 for m in metrics) == cached
    assert sum(m.output_tokens.value or 0 for m in metrics) == out
    assert all(m.input_tokens.provenance == "measured" for m in metrics)
    paths = write_report(outcome.run_dir)
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    idents = {a["arm"]: a for a in summary["run"]["arm_identities"]}
    assert idents["local-stdio"]["agent_version"] == "codex-cli 0.171.0"
    assert "not applicable" in idents["local-stdio"]["tool_discovery"]
    run = load_run(outcome.run_dir)
    baseline = run.info.arm_identities()["baseline"]
    assert baseline is not None and baseline["agent_version"] == "codex-cli 0.171.0"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_real_codex_with_no_endpoint_is_infra_at_once_and_stops_the_run(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    url = f"http://127.0.0.1:{_closed_port()}"
    edit_experiment(
        exp,
        trials=1,
        tasks=[task_named(exp, "read-issue-title")],
        agent=codex_agent(url),
        arms={"a": {"tools": "none"}, "b": {"tools": "none"}},
        comparisons=[["a", "b"]],
        budget={"trial_timeout_s": 120, "concurrency": 1},
    )
    outcome = start_run(exp, tmp_path / "runs", run_seed=5)
    assert outcome.status.startswith("stopped"), outcome.status
    assert f"{url}/v1" in outcome.status and "Fix: start the endpoint" in outcome.status
    infra = sorted((outcome.run_dir / "infra").rglob("*.json"))
    assert len(infra) == 2  # the attempt and its one retry, both kept
    assert all(json.loads(p.read_text())["outcome"] == "infra" for p in infra)
    # Each ended within 5 s of codex's first reconnect event, by transcript timestamps.
    transcripts = sorted((outcome.run_dir / "infra").rglob("*.jsonl"))
    assert len(transcripts) == 2
    for path in transcripts:
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        first = next(e["t"] for e in events if str(e.get("text", "")).startswith("Reconnecting"))
        stopped = next(e["t"] for e in events if e["kind"] == "agent_stopped")
        assert stopped - first < 5.0, (first, stopped)
