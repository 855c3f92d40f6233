"""`pairbench demo --agent ...` runs the mcp-transports study with a real agent adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.common import cli, cli_here
from pairbench import load_run
from pairbench.testing.chat_double import start_chat_double

pytestmark = pytest.mark.whole_run


def test_demo_with_the_openai_agent_against_the_local_double(tmp_path: Path) -> None:
    with start_chat_double() as double:
        done = cli(
            "demo",
            "--agent",
            "openai",
            "--base-url",
            f"{double.url}/v1",
            "--model",
            "double",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-seed",
            "3",
            "--trials",
            "1",  # the whole study once: every task and arm (the scripted demo runs all 81)
            cwd=tmp_path,
        )
        requests = len(double.requests)
    assert done.returncode == 0, done.stderr
    copy = tmp_path / "runs" / "demo-openai" / "experiment.yaml"
    assert copy.is_file() and "adapter: openai" in copy.read_text()
    assert "trials: 1" in copy.read_text()
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if p.name.startswith("mcp-"))
    results = load_run(run_dir).results
    assert len(results) == 27 and {r.agent for r in results} == {"openai"}
    assert requests >= 27
    tool_arm_title = [r for r in results if r.task == "read-issue-title" and r.arm != "baseline"]
    assert all(r.outcome == "passed" for r in tool_arm_title)
    assert all(r.seeding and r.seeding.status == "seeded" for r in results)
    info = json.loads((run_dir / "run.json").read_text())
    assert info["agents"]["baseline"]["settings"]["base_url"] == f"{double.url}/v1"
    # A second demo with the same settings reuses the copy; nothing stored is overwritten.
    assert not (tmp_path / "runs" / "demo-openai-2").exists()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ([], "--trials needs --agent"),
        (["--study", "runtime-revision-ab", "--agent", "openai"], "runs its own plan"),
    ],
)
def test_trials_the_demo_cannot_apply_is_a_clear_error(
    tmp_path: Path, extra: list[str], said: str
) -> None:
    done = cli_here("demo", "--trials", "1", "--runs-dir", str(tmp_path), *extra, cwd=tmp_path)
    assert done.returncode != 0
    assert said in done.stderr and "drop --trials" in done.stderr
    assert not any(tmp_path.iterdir())  # nothing ran, nothing was copied


def test_demo_openai_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    done = cli("demo", "--agent", "openai", "--runs-dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode != 0
    assert "--agent openai needs --base-url and --model" in done.stderr
