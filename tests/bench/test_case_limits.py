"""Bench case 11 at toy size, so it cannot rot: 8 MiB printed and written against 1 MiB
limits end as output_limit and disk_limit, the run completes, its report is written and
the viewer opens each trial."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.whole_run

BENCH = Path(__file__).parents[2] / "bench" / "case_limits.py"


def test_case_11_ends_each_hostile_attempt_at_its_limit() -> None:
    (BENCH.parent / ".work").mkdir(exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [*sys.path] if p)
    done = subprocess.run(
        [sys.executable, str(BENCH), "--mib", "8", "--limits",
         "{output_per_stream: 1 MiB, file_size: 1 MiB}"],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    by_arm = {(o["arm"], o["outcome"]) for o in result["outcomes"]}
    assert by_arm == {("prints", "output_limit"), ("writes", "disk_limit")}
    assert len(result["outcomes"]) == 4
    assert result["run_completed"] and result["report_written"]
    assert result["run_folder_bytes"] < 16 << 20
    # The viewer answered each arm's trial page and transcript (timed, not judged here).
    assert set(result["viewer_trial_page_s"]) == {
        "prints",
        "prints transcript",
        "writes",
        "writes transcript",
    }
