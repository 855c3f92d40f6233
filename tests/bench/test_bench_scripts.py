"""The bench's own scripts at toy size (cases 6 and 7, the integrity overhead, the
attribution held-out run): each runs against today's APIs and writes its result file in a
tmp folder. Apart from test_bench_cases.py so the two modules run side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.bench import bench
from helpers.common import REPO

pytestmark = pytest.mark.whole_run


def test_case_6_plots_at_toy_size(tmp_path: Path) -> None:
    plots = bench("plots.py", "--toy", root=tmp_path)["plots"]
    assert plots["cases"]["toy"]


def test_case_7_model_with_the_chat_double_in_its_place(tmp_path: Path) -> None:
    model = bench("model.py", "--toy", root=tmp_path)["model"]
    assert model["toy"] and model["cases"]["c1"]["trials"] == 2


def test_integrity_overhead_against_this_tree_at_toy_size(tmp_path: Path) -> None:
    args = ("--base-src", str(REPO / "src"), "--rounds", "1", "--trials", "40", "--small", "20")
    result = bench("integrity_overhead.py", *args, root=tmp_path)["integrity_overhead"]
    assert len(result["cpu_per_trial"]["paired_diff_ms"]) == 1


def test_attribution_held_out_with_one_session(tmp_path: Path) -> None:
    result = bench("attribution_heldout.py", "--toy", root=tmp_path)["attribution_heldout"]
    assert result["status"] == "complete"
