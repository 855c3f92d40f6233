"""mcp-transports with the REAL ``claude`` binary (npm ``@anthropic-ai/claude-code``, pinned)
through the runner, against pairbench's local Anthropic Messages API double.

What only the real binary shows, proven here: in ``-p`` mode Claude Code starts its model
before a slow stdio server has connected unless ``MCP_CONNECTION_NONBLOCKING=0`` is pinned
(the adapter's ``wait_for_mcp``), which would confound the transport comparison; a server
that is not ``connected`` at ``init`` is the harness's transport failure (``infra``), never a
scored ``failed``; an unreachable API is ``infra`` at its first ``api_retry``, and the retry's
second ``infra`` stops the run naming the URL.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.common import edit_experiment, real_cli, study_copy, task_named
from pairbench import load_run, start_run, write_report
from pairbench.testing.anthropic_double import start_anthropic_double

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
SLOW_TRACKER = (
    "import runpy, time; time.sleep({delay}); "
    "runpy.run_module('pairbench.studies.mcp_transports.tracker_server', run_name='__main__')"
)


def claude_agent(url: str, **settings: Any) -> dict[str, Any]:
    return {
        "adapter": "claude-code",
        "settings": {
            "model": "claude-sonnet-4-5",
            "executable": str(real_cli("claude")),
            "max_turns": 8,
            **settings,
        },
        "env": {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
    }


def slow_stdio(exp: Path, delay: float) -> dict[str, Any]:
    """The study's arms, with a stdio tracker that takes ``delay`` s to start serving."""
    from ruamel.yaml import YAML

    arms = dict(YAML(typ="safe").load(exp.read_text(encoding="utf-8"))["arms"])
    command = [sys.executable, "-c", SLOW_TRACKER.format(delay=delay)]
    arms["local-stdio"]["tools"]["mcp"]["tracker"]["command"] = command
    return arms


def _audit(run_dir: Path, arm: str, task: str) -> list[str]:
    found = sorted((run_dir / "fixtures" / arm / task).glob("*/audit.jsonl"))
    return [json.loads(line)["tool"] for p in found for line in p.read_text().splitlines()]


def test_real_claude_runs_all_nine_tasks_the_same_over_both_transports(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    with start_anthropic_double() as double:
        edit_experiment(
            exp,
            trials=1,
            tasks=[task_named(exp, t) for t in TASKS],
            agent=claude_agent(double.url),
            arms=slow_stdio(exp, 4.0),  # with the MCP-wait pin removed, stdio loses here
            budget={"trial_timeout_s": 120, "concurrency": 3},
        )
        outcome = start_run(exp, tmp_path / "runs", run_seed=5)
        main = list(double.main_usages)
        paths = set(double.paths)
    assert outcome.status == "complete", outcome.status
    assert paths <= {"HEAD /", "POST /v1/messages"}, paths  # nothing but the API itself
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
            assert _audit(outcome.run_dir, arm, task)  # the calls reached the tracker
            assert r.metrics is not None and r.metrics.connect_ms["tracker"].value
        assert results["baseline", task].outcome != "passed"
    stdio_metrics = results["local-stdio", "read-issue-title"].metrics
    assert stdio_metrics is not None and (stdio_metrics.connect_ms["tracker"].value or 0) > 4000

    # Usage: summary.json equals the double's responses, split into its parts.
    report = write_report(outcome.run_dir)
    summary = json.loads(report.summary.read_text(encoding="utf-8"))
    metrics = [r.metrics for r in outcome.results if r.metrics is not None]
    for field, key in (
        ("uncached_input_tokens", "input_tokens"),
        ("cache_creation_input_tokens", "cache_creation_input_tokens"),
        ("cache_read_input_tokens", "cache_read_input_tokens"),
        ("output_tokens", "output_tokens"),
    ):
        assert sum(getattr(m, field).value for m in metrics) == sum(u[key] for u in main), field
        assert all(getattr(m, field).provenance == "measured" for m in metrics)
    parts = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    total = sum(u[k] for u in main for k in (*parts, "output_tokens"))
    totals = [v for m in metrics if (v := m.total_tokens.value) is not None]
    assert len(totals) == len(metrics) and sum(totals) == total
    # summary.json's measured totals, per part, add up to what the double answered.
    for field, key in (
        ("uncached_input_tokens", "input_tokens"),
        ("cache_creation_input_tokens", "cache_creation_input_tokens"),
        ("cache_read_input_tokens", "cache_read_input_tokens"),
        ("output_tokens", "output_tokens"),
    ):
        reported = sum(arm[field]["measured"]["total"] for arm in summary["cost"])
        assert reported == sum(u[key] for u in main), field
    idents = {a["arm"]: a for a in summary["run"]["arm_identities"]}
    assert {a: idents[a]["tool_discovery"] for a in idents} == dict.fromkeys(idents, "false")
    assert idents["local-stdio"]["agent_version"] == "2.1.197 (Claude Code)"
    local = load_run(outcome.run_dir).info.arm_identities()["local-stdio"]
    assert local is not None
    pinned = local["pinned_env"]
    assert pinned["MCP_CONNECTION_NONBLOCKING"] == "0" and pinned["MCP_CONNECT_TIMEOUT_MS"]
    assert pinned["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert "tool discovery" in (outcome.run_dir / "report.md").read_text(encoding="utf-8").lower()


def _infra_reasons(run_dir: Path) -> list[str]:
    return [
        json.loads(p.read_text(encoding="utf-8"))["reason"]
        for p in sorted((run_dir / "infra").rglob("*.json"))
    ]


def test_without_the_wait_pin_a_slow_stdio_server_is_infra_not_a_failure(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    with start_anthropic_double() as double:
        arms = slow_stdio(exp, 4.0)
        edit_experiment(
            exp,
            trials=1,
            tasks=[task_named(exp, "read-issue-title")],
            agent=claude_agent(double.url, wait_for_mcp=False),
            arms={"baseline": arms["baseline"], "local-stdio": arms["local-stdio"]},
            comparisons=[["baseline", "local-stdio"]],
            budget={"trial_timeout_s": 120, "concurrency": 1},
        )
        outcome = start_run(exp, tmp_path / "runs", run_seed=5)
    # Pending at init: never scored; kept, retried once, then the run stops.
    assert outcome.status.startswith("stopped"), outcome.status
    reasons = _infra_reasons(outcome.run_dir)
    assert len(reasons) == 2 and all("'tracker'" in r and "pending" in r for r in reasons)
    assert not [r for r in outcome.results if r.arm == "local-stdio" and r.outcome == "failed"]
    # The connect failure still counts in the arm's transport figures.
    kept = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((outcome.run_dir / "infra").rglob("*.json"))
    ]
    assert all(k["metrics"]["transport_failures"] >= 1 for k in kept)
    assert all("connect" in k["metrics"]["transport_failure_kinds"] for k in kept)
    summary = json.loads(write_report(outcome.run_dir).summary.read_text(encoding="utf-8"))
    (stdio,) = [t for t in summary["transport"] if t["arm"] == "local-stdio"]
    assert stdio["infra_attempts_with_transport_failures"] == 2
    assert "In infra attempts" in (outcome.run_dir / "report.md").read_text(encoding="utf-8")


def test_a_stdio_server_that_never_starts_is_not_connected_at_init_and_infra(
    tmp_path: Path,
) -> None:
    exp = study_copy(tmp_path)
    with start_anthropic_double() as double:
        arms = slow_stdio(exp, 3600.0)
        edit_experiment(
            exp,
            trials=1,
            tasks=[task_named(exp, "read-issue-title")],
            agent=claude_agent(double.url, mcp_timeout_ms=1500),
            arms={"baseline": arms["baseline"], "local-stdio": arms["local-stdio"]},
            comparisons=[["baseline", "local-stdio"]],
            budget={"trial_timeout_s": 120, "concurrency": 1},
        )
        outcome = start_run(exp, tmp_path / "runs", run_seed=5)
    assert outcome.status.startswith("stopped"), outcome.status
    reasons = _infra_reasons(outcome.run_dir)
    assert len(reasons) == 2 and all("'failed'" in r for r in reasons), reasons
    transcripts = sorted((outcome.run_dir / "infra").rglob("*.jsonl"))
    for path in transcripts:
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        (connect,) = [e for e in events if e["kind"] == "mcp_connect"]
        assert connect["ok"] is False and connect["status"] == "failed"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_real_claude_with_no_api_is_infra_at_its_first_retry_and_stops_the_run(
    tmp_path: Path,
) -> None:
    exp = study_copy(tmp_path)
    url = f"http://127.0.0.1:{_closed_port()}"
    edit_experiment(
        exp,
        trials=1,
        tasks=[task_named(exp, "read-issue-title")],
        agent=claude_agent(url),
        arms={"a": {"tools": "none"}, "b": {"tools": "none"}},
        comparisons=[["a", "b"]],
        budget={"trial_timeout_s": 120, "concurrency": 1},
    )
    outcome = start_run(exp, tmp_path / "runs", run_seed=5)
    assert outcome.status.startswith("stopped"), outcome.status
    assert url in outcome.status and "Fix: start the endpoint" in outcome.status
    assert len(_infra_reasons(outcome.run_dir)) == 2
    for path in sorted((outcome.run_dir / "infra").rglob("*.jsonl")):
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        first = next(e["t"] for e in events if e["kind"] == "model_retry")
        stopped = next(e["t"] for e in events if e["kind"] == "agent_stopped")
        assert stopped - first < 1.0


BEARER_SERVER = Path(__file__).parent / "fixtures" / "bearer_server.py"


def _bearer_experiment(tmp: Path, url: str, variable: str) -> Path:
    tmp.mkdir(parents=True)
    token_file = tmp / "expected-token"  # outside the run folder: the server's own copy
    token_file.write_text("tok-cc-3f9a1e0b7d", encoding="utf-8")
    (tmp / "p.md").write_text("Ask the server who you are.\n", encoding="utf-8")
    server = {
        "transport": "http",
        "serve": [sys.executable, str(BEARER_SERVER)],
        "env": {"EXPECTED_TOKEN_FILE": str(token_file)},
        "bearer": f"${{env:{variable}}}",
    }
    exp = {
        "id": "bearer-claude",
        "version": "1",
        "trials": 1,
        "budget": {"trial_timeout_s": 90, "concurrency": 1},
        "infra": {"retries": 0},
        "agent": claude_agent(url, mcp_timeout_ms=5000),
        "arms": {"api": {"tools": {"mcp": {"api": server}}}, "baseline": {"tools": "none"}},
        "comparisons": [["api", "baseline"]],
        "tasks": [
            {"id": "whoami", "prompt": "p.md", "grader": {"name": "exact-answer",
                                                          "args": {"expect": "done"}}}
        ],
    }  # fmt: skip
    path = tmp / "experiment.yaml"
    path.write_text(json.dumps(exp), encoding="utf-8")
    return path


def _holding(folder: Path, value: str) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink() and value.encode() in p.read_bytes()
    )


def test_a_bearer_token_reaches_the_server_by_variable_and_is_in_no_file(
    tmp_path: Path, monkeypatch: Any
) -> None:
    # Claude Code expands ${VAR} in --mcp-config: the token lives in its environment only.
    monkeypatch.setenv("PB_CC_TOKEN", "tok-cc-3f9a1e0b7d")
    monkeypatch.setenv("PB_CC_WRONG", "tok-cc-wrong-0000")
    with start_anthropic_double() as double:
        good = start_run(_bearer_experiment(tmp_path / "a", double.url, "PB_CC_TOKEN"),
                         tmp_path / "ra", run_seed=2)  # fmt: skip
        bad = start_run(_bearer_experiment(tmp_path / "b", double.url, "PB_CC_WRONG"),
                        tmp_path / "rb", run_seed=2)  # fmt: skip
    (api,) = [r for r in good.results if r.arm == "api"]
    assert api.outcome != "infra", api.reason  # connected: the server took the token
    events = [
        json.loads(line)
        for line in (good.run_dir / "transcripts/api/whoami/0.jsonl").read_text().splitlines()
    ]
    assert any(e["kind"] == "mcp_connect" and e.get("server") == "api" for e in events), events
    configs = list((good.run_dir / "work" / "api").rglob("claude-mcp.json"))
    assert configs and all("${PAIRBENCH_MCP_HEADER_" in c.read_text() for c in configs)
    assert _holding(good.run_dir, "tok-cc-3f9a1e0b7d") == []
    run = load_run(bad.run_dir)
    refused = [r for r in [*run.results, *run.infra] if r.arm == "api" and r.outcome == "infra"]
    assert refused and all("'api'" in (r.reason or "") for r in refused), run.results
    assert _holding(bad.run_dir, "tok-cc-wrong-0000") == []
