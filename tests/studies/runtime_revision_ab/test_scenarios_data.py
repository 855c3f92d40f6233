"""The ten scenario folders: complete, readable, and their acceptance fails on the untouched
workspace (a task that passes without work measures nothing)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pairbench.studies.runtime_revision_ab as rab
from pairbench.studies.runtime_revision_ab import SCENARIO_IDS, load_scenario
from pairbench.studies.runtime_revision_ab._snapshot import delta, snapshot


def test_the_public_names_are_deliberate() -> None:
    assert sorted(rab.__all__) == sorted(
        ["CANARY", "MODEL_PORT", "PINNED", "STUDY", "MinirtAgent", "ScenarioEvidence",
         "grade_minirt", "prepare", "scenario_evidence", "SCENARIO_IDS", "ClaimEvidence",
         "DispatchEvent", "ExampleRepo",
         "FileChange", "FileState", "ModelServer", "Obligation", "Prohibited",
         "ProviderRequest", "Scenario", "ScenarioResult", "Scope", "claim_evidence",
         "load_scenario", "make_example", "prohibited_attempts", "read_events",
         "run_scenario", "serve_model"]
    )  # fmt: skip


@pytest.mark.parametrize("scenario_id", SCENARIO_IDS)
def test_each_scenario_is_complete_and_not_solved_already(scenario_id: str, tmp_path: Path) -> None:
    scenario = load_scenario(scenario_id)
    assert scenario.id == scenario_id and scenario_id in scenario.prompt()
    assert scenario.scope.allowed and scenario.obligations
    assert (scenario.root / "accept.py").is_file() and scenario.workspace.is_dir()
    copy = tmp_path / "ws"
    shutil.copytree(scenario.workspace, copy)
    done = subprocess.run([sys.executable, str(scenario.root / "accept.py"), str(copy)],
                          cwd=copy, capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode != 0, done.stderr


def test_a_snapshot_delta_names_content_mode_and_removal(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("1", encoding="utf-8")
    (tmp_path / "b").write_text("2", encoding="utf-8")
    before = snapshot(tmp_path)
    (tmp_path / "a").write_text("changed", encoding="utf-8")
    (tmp_path / "b").chmod(0o755)
    (tmp_path / "c").symlink_to("a")
    assert [(c.path, c.change) for c in delta("workspace", before, snapshot(tmp_path))] == [
        ("a", "content"), ("b", "mode"), ("c", "added")
    ]  # fmt: skip
