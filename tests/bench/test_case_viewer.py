"""Bench case 8 at toy size, so it cannot rot: 2,000 trials written as a real run folder,
the real ``pairbench view`` serving it, every step driven in Chromium. Not timed here: it
proves the case runs against today's view and that no page carries more than one page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

BENCH = Path(__file__).parents[2] / "bench" / "case_viewer.py"


def test_case_8_measures_the_view_of_a_run_in_chromium(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--work", str(tmp_path / "w"), "--tasks", "10",
         "--trials", "100", "--long-events", "1000"],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["run_written"]["records"] == 2000
    assert set(result["timings_s"]) >= {"first_useful_page_cold_s", "transcript_show_more_s"}
    pages = result["checks"]["pages"]
    assert pages["first_useful_page_cold_s"]["trial_rows"] == 25
    assert all(p["trial_rows"] <= 200 for p in pages.values())
    assert pages["filter_no_match_s"]["trial_rows"] == 0
    assert pages["trial_transcript_s"]["events"] == 200  # one part of 1,001 events
    assert result["checks"]["transcript_events_after_more"] == 400
    assert "of 2,000 trials match" in result["checks"]["filter_matched"]
    assert result["server_peak_rss_mb"] > 0
