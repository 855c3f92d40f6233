"""``protected:`` folders: hashed into run.json before a run, a runs folder inside one
refused, and a resume after their bytes changed refused naming the folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pairbench import resume_run, start_run
from pairbench._errors import ResumeRefused, RunRefused
from pairbench.runner._protected import protected_sha256

ANSWER = "import sys; sys.stdin.read(); print('ok')"


def _experiment(root: Path) -> Path:
    (root / "historical" / "results").mkdir(parents=True)
    (root / "historical" / "results" / "AR-001.json").write_text('{"passed": true}\n', "utf-8")
    (root / "historical" / ".campaign-id").write_text("LOCAL-BASELINE-01\n", encoding="utf-8")
    (root / "p.md").write_text("Go.\n", encoding="utf-8")
    path = root / "experiment.yaml"
    agent = {"adapter": "command", "settings": {"command": ["python3", "-c", ANSWER]}}
    path.write_text(
        f"id: guarded\nversion: '1'\nprotected: [historical]\nagent: {json.dumps(agent)}\n"
        "arms: {a: {}, b: {}}\n"
        "tasks:\n  - {id: t, prompt: p.md, grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    return path


def test_protected_folders_are_hashed_and_a_changed_one_refuses_resume(tmp_path: Path) -> None:
    exp = _experiment(tmp_path)
    run = start_run(exp, tmp_path / "runs", run_seed=1)
    assert run.status == "complete"
    info = json.loads((run.run_dir / "run.json").read_text(encoding="utf-8"))
    recorded = info["identities"]["protected"]
    assert recorded == {"historical": protected_sha256(tmp_path / "historical")}
    resume_run(run.run_dir)  # unchanged: resumes (nothing left to run)
    # A hidden file or a mode bit is evidence too.
    os.chmod(tmp_path / "historical" / ".campaign-id", 0o600)
    with pytest.raises(ResumeRefused, match=r"protected folder\(s\) changed .*historical"):
        resume_run(run.run_dir)


def test_a_runs_folder_inside_a_protected_folder_is_refused_and_nothing_is_made(
    tmp_path: Path,
) -> None:
    exp = _experiment(tmp_path)
    before = protected_sha256(tmp_path / "historical")
    inside = tmp_path / "historical" / "runs"
    with pytest.raises(RunRefused, match="is inside protected folder 'historical'"):
        start_run(exp, inside, run_seed=1)
    assert not inside.exists()
    assert protected_sha256(tmp_path / "historical") == before
    exp.write_text(exp.read_text("utf-8").replace("[historical]", "[gone]"), encoding="utf-8")
    with pytest.raises(RunRefused, match="protected folder 'gone'"):
        start_run(exp, tmp_path / "runs", run_seed=1)
