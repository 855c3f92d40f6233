"""Tier 1 of mcp-transports-playwright with model agents: the openai adapter, and the REAL
``claude`` and ``codex`` binaries, each against pairbench's local double of its model API.

The doubles' browser agent reads only what the browser returned (the navigation's page title,
the snapshot's table), so a pass proves the agent reached the real ``@playwright/mcp`` over
each transport and that its results came back through the agent's own MCP client: Claude Code
and Codex start the stdio server themselves and connect to the warm HTTP one by URL.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from helpers.common import CLI_BIN, edit_experiment, real_cli
from pairbench.runner import start_run
from pairbench.studies.mcp_transports_playwright import STUDY
from pairbench.studies.mcp_transports_playwright._fixture import read_files
from pairbench.testing.anthropic_double import start_anthropic_double
from pairbench.testing.chat_double import start_chat_double
from pairbench.testing.responses_double import start_responses_double

pytestmark = pytest.mark.cli

TIER_1 = ("read-title", "read-cell")
TOOL_ARMS = ("local-stdio", "remote-http")


def _openai(url: str) -> dict[str, Any]:
    return {"adapter": "openai", "settings": {"base_url": f"{url}/v1", "model": "double"}}


def _claude(url: str) -> dict[str, Any]:
    return {
        "adapter": "claude-code",
        "settings": {"model": "claude-sonnet-4-5", "executable": str(real_cli("claude")),
                     "max_turns": 8},
        "env": {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
    }  # fmt: skip


def _codex(url: str) -> dict[str, Any]:
    config = {
        "model_provider": "local",
        "model_providers.local.name": "local",
        "model_providers.local.base_url": f"{url}/v1",
        "model_providers.local.env_key": "OPENAI_API_KEY",
        "model_providers.local.wire_api": "responses",
    }
    return {
        "adapter": "codex",
        "settings": {"model": "test-model", "executable": str(real_cli("codex")), "config": config},
        "env": {"OPENAI_API_KEY": "test-key"},
    }


Double = Callable[[], AbstractContextManager[Any]]
AGENTS: dict[str, tuple[Double, Callable[[str], dict[str, Any]]]] = {
    "openai": (start_chat_double, _openai),
    "claude-code": (start_anthropic_double, _claude),
    "codex": (start_responses_double, _codex),
}


@pytest.fixture
def on_path(playwright_mcp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The study names playwright-mcp as its docs run it: the pinned install on PATH.
    monkeypatch.setenv("PATH", f"{CLI_BIN}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    yield


def _study(tmp: Path) -> Path:
    import shutil

    folder = tmp / "study"
    shutil.copytree(STUDY.root, folder, ignore=shutil.ignore_patterns("experiment.lock.json"))
    return folder / "experiment.yaml"


@pytest.mark.cli
@pytest.mark.parametrize("agent", list(AGENTS))
def test_tier_1_passes_over_both_transports_and_the_baseline_fails(
    tmp_path: Path, agent: str, on_path: None
) -> None:
    start_double, settings = AGENTS[agent]
    exp = _study(tmp_path)
    tasks = [t for t in YAML(typ="safe").load(exp.read_text("utf-8"))["tasks"] if t["id"] in TIER_1]
    with start_double() as double:
        edit_experiment(
            exp,
            trials=1,
            tasks=tasks,
            agent=settings(double.url),
            budget={"trial_timeout_s": 180, "concurrency": 2},
        )
        outcome = start_run(exp, tmp_path / "runs", run_seed=21)
    assert outcome.status == "complete", outcome.status
    by = {(r.arm, r.task): r for r in outcome.results}
    assert len(by) == 3 * len(TIER_1)
    for task in TIER_1:
        for arm in TOOL_ARMS:
            r = by[arm, task]
            assert r.outcome == "passed", (agent, arm, task, r.reason, r.final_answer)
            # The site saw this trial's browser, and only the browser.
            state = read_files(next((outcome.run_dir / "fixtures" / arm / task).iterdir()))
            assert state.audit and all(e.arguments["browser"] for e in state.audit)
            assert r.metrics is not None and r.metrics.tool_calls, (agent, arm, task)
        baseline = by["baseline", task]
        assert baseline.outcome != "passed", (agent, task, baseline.final_answer)
    if agent == "openai":  # pairbench's own MCP client identifies the server per trial
        for arm in TOOL_ARMS:
            servers = json.loads(by[arm, "read-title"].model_dump_json())["servers"]
            assert servers["playwright"]["name"] == "Playwright", (arm, servers)
