"""bench/case_import.py at toy size: the recorded 20-sample x 2-epoch Inspect logs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from helpers.common import REPO, skip_outside_ci

DATA = REPO / "tests" / "importers" / "data"


def _bench_module() -> Any:
    spec = importlib.util.spec_from_file_location("case_import", REPO / "bench/case_import.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.whole_run  # two fresh interpreters loading pairbench and inspect_ai: ~10 s
def test_case_import_measures_both_readers_on_the_same_logs() -> None:
    if importlib.util.find_spec("inspect_ai") is None:
        skip_outside_ci("inspect_ai is not importable (pip install 'pairbench[inspect]')")
    case_import = _bench_module()
    logs = [str(DATA / "inspect_a.eval"), str(DATA / "inspect_b.eval")]
    ours = case_import.measure("import", logs)
    theirs = case_import.measure("samples_df", logs)
    assert ours["samples"] == 80  # 20 samples x 2 epochs x 2 arms, every one paired
    assert theirs["samples"] == 80
    assert ours["peak_rss_mb"] > 0 and theirs["cpu_s"] >= 0
    assert Path(logs[0]).is_file()
