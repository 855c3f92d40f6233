"""A ceiling that holds, calibration included: engines written as a user would (a script
with no pairbench import, reporting a chosen cost per session), the real runner and the real
sites on 127.0.0.1.

The measured problem: a $7-a-session engine ran to $21.00 against a $20 ceiling; at $0.30 a
session the held-out run started although ``plan`` refused, and its $6.00 calibration run
was never counted; an engine reporting no usage was charged $0."""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pairbench import start_run, write_report
from pairbench.freeze import write_lock
from pairbench.spec import load_experiment
from pairbench.studies.attribution_reliability import STUDY
from pairbench.studies.attribution_reliability._spend import ProjectionOverCeiling

# The engine a team would write: it reads the request, never opens pairbench, and reports
# the cost its provider charged (read from cost.txt beside it, so a test can change it).
ENGINE = """
import json, pathlib, sys
json.loads(sys.stdin.read())
cost = float(pathlib.Path(__file__).with_name("cost.txt").read_text())
usage = [{"model": "acme:large", "input_tokens": 1000, "output_tokens": 100,
          "cost_usd": cost, "provenance": "measured"}] if cost >= 0 else []
print(json.dumps({"schema": "pairbench.attribution.report/1", "status": "completed",
                  "usage": usage}))
"""


def _study(tmp_path: Path, tasks: list[str] | None, cost: float, **engine: Any) -> Path:
    """The study's experiment with only ``tasks`` (None: every held-out task) and these
    calibration tasks, one attempt at a time, with the engine above at ``cost``."""
    root = tmp_path / "study"
    shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    script = tmp_path / "engine" / "engine.py"
    script.parent.mkdir()
    script.write_text(ENGINE, encoding="utf-8")
    (script.parent / "cost.txt").write_text(str(cost), encoding="utf-8")
    path = root / "experiment.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    keep = set(tasks or [])
    data["tasks"] = [
        t
        for t in data["tasks"]
        if t["id"] in keep or (tasks is None and t.get("case_set") == "held-out")
        or t["id"] in {"c-p01", "c-t01", "c-e02"}
    ]  # fmt: skip
    spec = {"engine": "command", "argv": [sys.executable, str(script)], **engine}
    data["agent"]["settings"] = {"engine": spec}
    data["budget"].update({"start_stagger_s": 0, "concurrency": 1})
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _spent(run_dir: Path) -> list[float]:
    """Every stored record's cost (final, infra and interrupted), read from the files."""
    costs = []
    for folder in ("results", "infra", "interrupted"):
        for file in sorted((run_dir / folder).rglob("*.json")):
            value = json.loads(file.read_bytes())["metrics"]
            if value is not None and value["cost_usd"]["value"] is not None:
                costs.append(float(value["cost_usd"]["value"]))
    return costs


def test_a_seven_dollar_engine_ends_under_twenty_calibration_included(tmp_path: Path) -> None:
    exp = _study(tmp_path, None, 7.0)
    runs = tmp_path / "runs"
    first = start_run(exp, runs, run_seed=1, case_set="calibration")
    # Session 1 reserved the declared $0.272 and cost $7 (an overshoot): session 2 reserved
    # $7 (14 <= 20), and a third would reach $21: stopped at $14, not $21.
    assert "the largest cost seen, which passed its declared worst case" in first.status
    assert _spent(first.run_dir) == [7.0, 7.0]
    # A second calibration run counts the first ($14) and starts its reservations at $7:
    # nothing can start.
    again = start_run(exp, runs, run_seed=2, case_set="calibration")
    assert "($14.0000 of it before this run)" in again.status
    assert _spent(again.run_dir) == []
    # The held-out run is refused before any session: 80 sessions projected at $7 (and
    # packages at 2 x $7) with $14 spent pass $20. No run folder is made.
    write_lock(load_experiment(exp), servers=False)
    before = sorted(runs.iterdir())
    with pytest.raises(ProjectionOverCeiling, match=r"refused before any session.*\$14\.00"):
        start_run(exp, runs, run_seed=3, case_set="held-out")
    assert sorted(runs.iterdir()) == before
    total = math.fsum([*_spent(first.run_dir), *_spent(again.run_dir)])
    assert total == 14.0 <= 20.0
    markdown = write_report(first.run_dir).markdown.read_text(encoding="utf-8")
    assert "Overshoots (2)" in markdown and "| c-p01 | 0 | 1 | $7.0000 | $0.2720 |" in markdown


def test_a_thirty_cent_engine_is_refused_its_held_out_run_and_counts_calibration(
    tmp_path: Path,
) -> None:
    # Calibration: three sessions at $0.30 ($0.90; the $0.272 declared is overshot once).
    # The held-out run: 60 end-to-end sessions at $0.30 and 20 packages at 2 x $0.30 = $30,
    # plus $0.90 spent, passes $20: refused, as `plan` refuses, before any session.
    exp = _study(tmp_path, None, 0.30)
    runs = tmp_path / "runs"
    calibration = start_run(exp, runs, run_seed=1, case_set="calibration")
    assert calibration.status == "complete"
    assert _spent(calibration.run_dir) == [0.3, 0.3, 0.3]
    write_lock(load_experiment(exp), servers=False)
    with pytest.raises(ProjectionOverCeiling, match=r"\$30\.00 \(projected from calibration run"):
        start_run(exp, runs, run_seed=2, case_set="held-out")
    assert [p.name for p in runs.iterdir() if p.is_dir()] == [calibration.run_dir.name]


def test_a_held_out_run_counts_its_calibration_and_stops_before_the_ceiling(
    tmp_path: Path,
) -> None:
    # Three held-out sessions under a $1.80 ceiling after a $0.90 calibration: projected
    # 3 x $0.30 + $0.90 = $1.80, allowed. The engine then costs $0.50 a session: the first
    # overshoots ($1.40 in all), the second would reserve $0.50 and reach $1.90: stopped.
    # Without the calibration counted the run would end at $1.50 + $0.90 = $2.40.
    exp = _study(tmp_path, ["p02", "t02", "e02"], 0.30)
    text = exp.read_text(encoding="utf-8").replace("cost_ceiling_usd: 20", "cost_ceiling_usd: 1.8")
    exp.write_text(text, encoding="utf-8")
    runs = tmp_path / "runs"
    calibration = start_run(exp, runs, run_seed=1, case_set="calibration")
    write_lock(load_experiment(exp), servers=False)
    (tmp_path / "engine" / "cost.txt").write_text("0.5", encoding="utf-8")
    held_out = start_run(exp, runs, run_seed=2, case_set="held-out")
    assert "($0.9000 of it before this run)" in held_out.status
    assert _spent(held_out.run_dir) == [0.5]
    total = math.fsum([*_spent(calibration.run_dir), *_spent(held_out.run_dir)])
    assert total == pytest.approx(1.4) and total <= 1.8
    markdown = write_report(held_out.run_dir).markdown.read_text(encoding="utf-8")
    assert f"{calibration.run_id} (calibration): $0.9000 over 3 session(s)" in markdown
    assert "Spend against the ceiling: $1.4000 of the $1.80 ceiling" in markdown
    assert "Overshoots (1)" in markdown


def test_an_engine_that_declares_a_model_and_reports_no_usage_is_charged_its_worst_case(
    tmp_path: Path,
) -> None:
    exp = _study(tmp_path, [], -1.0, models={"judge": "acme:large"})  # -1: no usage at all
    outcome = start_run(exp, tmp_path / "runs", run_seed=1, case_set="calibration")
    assert _spent(outcome.run_dir) == [0.272, 0.272, 0.272]  # not $0
    result = json.loads(next((outcome.run_dir / "results").rglob("c-p01/*.json")).read_bytes())
    session = json.loads(result["final_answer"])
    assert (session["cost_usd"], session["cost_provenance"]) == (0.272, "worst_case")
    markdown = write_report(outcome.run_dir).markdown.read_text(encoding="utf-8")
    assert "3 session(s) charged their declared worst case" in markdown
    assert "uses no model" not in markdown
    # The same engine declaring no model is model-free: nothing spent, nothing charged.
    free = _study(tmp_path / "free", [], -1.0)
    outcome = start_run(free, tmp_path / "free" / "runs", run_seed=1, case_set="calibration")
    assert _spent(outcome.run_dir) == []
