"""Paths an attempt hands out: a relative ``--runs-dir`` works for every adapter, and a run
folder nested deep still lets a server bind a Unix socket in its (short) TMPDIR."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import pytest
from ruamel.yaml import YAML

from helpers.common import edit_experiment, study_copy, task_named
from pairbench import start_run
from pairbench.testing.anthropic_double import start_anthropic_double
from pairbench.testing.chat_double import start_chat_double
from pairbench.testing.responses_double import start_responses_double
from test_real_claude import claude_agent
from test_real_codex import codex_agent

pytestmark = pytest.mark.cli

ADAPTERS = ("scripted", "simulated", "command", "openai", "claude-code", "codex")


class _Double(Protocol):
    url: str


def _agent(adapter: str, url: str) -> dict[str, Any]:
    if adapter == "claude-code":
        return claude_agent(url)
    if adapter == "codex":
        return codex_agent(url)
    if adapter == "openai":
        return {"adapter": "openai", "settings": {"base_url": f"{url}/v1", "model": "double"}}
    if adapter == "command":  # reads the MCP config the runner wrote, by the path it was given
        code = (
            "import json, os; "
            "print(sorted(json.load(open(os.environ['PAIRBENCH_MCP_CONFIG']))['mcpServers']))"
        )
        return {"adapter": "command", "settings": {"command": [sys.executable, "-c", code]}}
    if adapter == "simulated":
        success = {"baseline": 0.5, "local-stdio": 0.5, "remote-http": 0.5}
        return {"adapter": "simulated", "settings": {"success": success}}
    return {"adapter": "scripted"}


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_relative_runs_dir_works_for_every_adapter(
    adapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exp = study_copy(tmp_path)
    doubles: dict[str, Callable[[], AbstractContextManager[_Double]]] = {
        "openai": start_chat_double,
        "claude-code": start_anthropic_double,
        "codex": start_responses_double,
    }
    monkeypatch.chdir(tmp_path)
    with doubles.get(adapter, start_chat_double)() as double:
        edit_experiment(
            exp,
            trials=1,
            tasks=[task_named(exp, "read-issue-title")],
            agent=_agent(adapter, double.url),
            budget={"trial_timeout_s": 120, "concurrency": 1},
        )
        outcome = start_run(Path("study/experiment.yaml"), Path("runs"), run_seed=2)
    assert outcome.status == "complete", outcome.status
    assert outcome.run_dir.is_relative_to(tmp_path / "runs")
    results = {r.arm: r for r in outcome.results}
    assert all(r.outcome != "infra" for r in results.values())
    if adapter == "command":
        assert results["local-stdio"].final_answer == "['tracker']"
    elif adapter != "simulated":
        for arm in ("local-stdio", "remote-http"):
            assert results[arm].outcome == "passed", (arm, results[arm].reason)


SOCKET_SERVER = (
    "import os, runpy, socket; s = socket.socket(socket.AF_UNIX); "
    "s.bind(os.path.join(os.environ['TMPDIR'], 'server-' + 'x' * 40 + '.sock')); "
    "runpy.run_module('pairbench.studies.mcp_transports.tracker_server', run_name='__main__')"
)


def test_a_deep_run_folder_still_lets_a_server_bind_a_unix_socket(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    arms = dict(YAML(typ="safe").load(exp.read_text(encoding="utf-8"))["arms"])
    command = [sys.executable, "-c", SOCKET_SERVER]
    arms["local-stdio"]["tools"]["mcp"]["tracker"]["command"] = command
    edit_experiment(
        exp,
        trials=1,
        tasks=[task_named(exp, "read-issue-title")],
        arms={"baseline": arms["baseline"], "local-stdio": arms["local-stdio"]},
        comparisons=[["baseline", "local-stdio"]],
    )
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    assert len(str(deep)) >= 150
    outcome = start_run(exp, deep, run_seed=2)
    assert outcome.status == "complete", outcome.status
    (stdio,) = [r for r in outcome.results if r.arm == "local-stdio"]
    assert stdio.outcome == "passed", stdio.reason
    # The same bind under the run folder itself would not fit a Unix socket path.
    inside = outcome.run_dir / "work/local-stdio/read-issue-title/0.1/servers/tmp"
    assert len(str(inside / ("server-" + "x" * 40 + ".sock"))) > 108
