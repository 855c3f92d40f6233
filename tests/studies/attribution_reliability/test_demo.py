"""``pairbench demo --study attribution-reliability``: the calibration set judged by the
heuristic reference engine offline, reported, and its numbers the ones recorded before the
study's code moved out of the core (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.common import cli_here
from helpers.demo_numbers import assert_same_numbers
from pairbench.freeze._verify_run import verify_run

pytestmark = [pytest.mark.browser, pytest.mark.whole_run]


def test_the_demo_runs_the_calibration_set_and_gives_the_recorded_numbers(tmp_path: Path) -> None:
    done = cli_here(
        "demo", "--study", "attribution-reliability", "--run-seed", "3",
        "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = (tmp_path / "runs").glob("attribution-reliability-*")
    assert (run_dir / "report.html").is_file() and verify_run(run_dir) == []
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["study"]["name"] == "attribution-reliability"
    # Calibration is never reported as results: its sessions are listed, not scored.
    part = summary["study"]["data"]
    assert part["case_set"] == "calibration" and part["calibration"] and not part["scorecards"]
    # Seed 3's outcomes, per-case k/n and each calibration session's published and
    # set-aside findings as recorded at 2689c37 (helpers.demo_numbers).
    assert_same_numbers("attribution", run_dir)
