"""Helpers for the experiment-file tests: a folder holding a valid experiment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

_REGISTRY = {
    "agents": {"scripted", "command"},
    "graders": {"tracker-answer"},
    "fixtures": {"tracker"},
}

_VALID = """\
id: demo
version: 1.0.0
protocol: protocol.md
trials: 2
budget: {trial_timeout_s: 60, concurrency: 2}
agent: {adapter: scripted}
comparisons: [[baseline, local]]
arms:
  baseline: {tools: none}
  local:
    tools:
      mcp:
        tracker: {transport: stdio, command: [python3, -m, tracker_server]}
tasks:
  - id: read-title
    labels: {tier: 1}
    prompt: prompts/read.md
    fixture: tracker
    grader: {name: tracker-answer, args: {field: title}}
    plan: plans/read.yaml
"""


@pytest.fixture
def registry() -> dict[str, set[str]]:
    """The plugin names the tests register: what the installed entry points would give."""
    return {group: set(known) for group, known in _REGISTRY.items()}


@pytest.fixture
def valid() -> str:
    """A valid experiment naming every kind of file and plugin."""
    return _VALID


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str], Path]:
    """Write ``text`` as ``experiment.yaml`` next to the files the valid experiment names."""
    for rel in ("protocol.md", "prompts/read.md", "prompts/other.md", "plans/read.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n", encoding="utf-8")

    def _write(text: str, name: str = "experiment.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write
