"""results.json, as the report wrote it, is hashed into the journal: a hand-edited recall
fails ``pairbench verify`` naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.common import cli_here
from pairbench import start_run, write_report
from pairbench.freeze import verify_run, write_lock
from pairbench.spec import load_experiment
from studies.attribution_reliability.test_study import ORACLE, _copy

pytestmark = pytest.mark.browser


def test_a_hand_edited_recall_in_results_json_fails_verify(tmp_path: Path) -> None:
    exp = _copy(tmp_path, ["p02"], ORACLE)
    write_lock(load_experiment(exp), servers=False)
    run = start_run(exp, tmp_path / "runs", run_seed=1, case_set="held-out")
    write_report(run.run_dir)
    assert verify_run(run.run_dir) == []
    results = run.run_dir / "results.json"
    card = json.loads(results.read_text(encoding="utf-8"))
    recall = card["heuristic"]["metrics"]["recall"]
    assert (recall["k"], recall["n"]) == (1, 10)
    recall["k"] = 10  # the motivated operator: 10/10
    results.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    done = cli_here("verify", str(run.run_dir), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "recorded: results.json: expected" in done.stderr
