"""Bench case 5 at toy size, so it cannot rot: the synthetic run it writes (200 records
instead of a million) is one ``pairbench report`` reads and reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.common import cli_here

pytestmark = pytest.mark.whole_run

BENCH = Path(__file__).parents[2] / "bench" / "case_analysis.py"


def test_case_5_writes_a_run_the_report_reads(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, str(BENCH), "write-run", "--out", str(out), "--tasks", "5",
         "--trials", "20"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["records"] == 200
    report = cli_here("report", str(out), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["trials"] == 200
