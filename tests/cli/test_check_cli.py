"""`pairbench check` through the real console entry point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FIVE_ERRORS = """\
id: broken
version: "1"
trails: 3
agent: {adapter: scripted}
budget: {trial_timeout_s: -5}
comparisons: [[a, nope]]
arms:
  a: {}
  b: {}
  a: {}
tasks:
  - {id: t, prompt: p.md, grader: {name: no-such-grader}}
"""


def test_check_prints_five_errors_with_lines_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("x", encoding="utf-8")
    (tmp_path / "experiment.yaml").write_text(FIVE_ERRORS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pairbench", "check", "experiment.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.startswith("experiment.yaml:")]
    assert len(lines) == 5, done.stderr
    joined = "\n".join(lines)
    assert "experiment.yaml:3: trails" in joined and "did you mean 'trials'" in joined
    assert "experiment.yaml:5: budget.trial_timeout_s" in joined
    assert "experiment.yaml:6: comparisons" in joined and "nope" in joined
    assert "experiment.yaml:10:" in joined and "duplicate" in joined.lower()
    assert "experiment.yaml:12: tasks[0].grader.name" in joined and "no-such-grader" in joined
    assert "Traceback" not in done.stderr


def test_check_ok_and_run_refuses_an_invalid_file(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("x", encoding="utf-8")
    (tmp_path / "experiment.yaml").write_text(FIVE_ERRORS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pairbench", "run", "experiment.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "5 problem(s) found" in done.stderr
    assert not (tmp_path / "runs").exists()  # nothing is started on an invalid file
