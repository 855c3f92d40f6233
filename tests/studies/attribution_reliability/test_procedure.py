"""The protocol's procedure through the runner: a package recorded once per trial and judged
by every arm, the site live while an engine judges (an unscripted follow-up user can browse
it), and the cost ceiling stopping a run before a session whose worst case would cross it."""

from __future__ import annotations

import json
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
from pairbench.studies.attribution_reliability._bundle import recording_folder
from pairbench.studies.attribution_reliability._reference import OracleEngine

pytestmark = pytest.mark.browser

ORACLE = {"engine": "python", "target": f"{OracleEngine.__module__}:OracleEngine"}
REPORT = {"schema": "pairbench.attribution.report/1", "status": "completed"}

# A follow-up user in judge mode: while judging, it opens the start page and every page the
# recording names, as a plain HTTP client would, and notes what each answered.
FOLLOW_UP = """
import json, pathlib, sys, urllib.error, urllib.request
req = json.loads(sys.stdin.read())
urls = [req["start_url"]] + [s["url"] for u in req.get("sessions", []) for s in u["steps"]]
seen = {}
for url in urls:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            seen[url] = answer.status
    except urllib.error.HTTPError as exc:
        seen[url] = exc.code
    except OSError as exc:
        seen[url] = str(exc)
pathlib.Path(OUT).write_text(json.dumps(seen))
print(json.dumps(REPORT))
"""


def _study(
    tmp_path: Path, tasks: list[str], arms: dict[str, dict[str, Any]], **budget: Any
) -> Path:
    root = tmp_path / "study"
    shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "experiment.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] in tasks]
    data["arms"] = {
        name: {"agent": {"adapter": "attribution-engine", "settings": {"engine": engine}}}
        for name, engine in arms.items()
    }
    if len(arms) > 1:
        data.pop("descriptive", None)
    data["budget"].update({"start_stagger_s": 0, **budget})
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _events(run_dir: Path, kind: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((run_dir / "transcripts").rglob("*.jsonl")):
        arm = path.relative_to(run_dir / "transcripts").parts[0]
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event["kind"] == kind:
                found.setdefault(arm, []).append(event)
    return found


def test_a_package_is_recorded_once_per_trial_and_every_arm_judges_it_on_a_live_site(
    tmp_path: Path,
) -> None:
    script = tmp_path / "follow_up.py"
    out = tmp_path / "follow_up.json"
    script.write_text(f"OUT = {str(out)!r}\nREPORT = {REPORT!r}\n{FOLLOW_UP}", encoding="utf-8")
    # Uncontained: it writes what the site answered into the test's folder.
    follow_up = {"engine": "command", "argv": [sys.executable, str(script)], "contained": False}
    # Two workers: both arms of the trial reach the package at once, and one waits.
    exp = _study(tmp_path, ["c-k04"], {"oracle": ORACLE, "follow-up": follow_up}, concurrency=2)
    outcome = start_run(exp, tmp_path / "runs", run_seed=5)
    assert outcome.status == "complete"
    recorded = _events(outcome.run_dir, "package_recorded")
    assert sorted(recorded) == ["follow-up", "oracle"]
    (first,), (second,) = recorded["oracle"], recorded["follow-up"]
    assert first["sha256"] == second["sha256"]  # the same bytes, judged by both arms
    assert sorted([first["reused"], second["reused"]]) == [False, True]
    # Kept per lock beside the runs: a later run under the same lock (another run seed,
    # so another slug) judges the same bytes, recorded by no one again.
    folder = recording_folder(outcome.run_dir / "shared" / "c-k04" / "0")
    assert folder is not None and folder.parent.parent.parent.name == ".recordings"
    stored = folder / "package.json"
    assert stored.is_file() and json.loads(stored.read_bytes())["sessions"]
    again = start_run(exp, tmp_path / "runs", run_seed=6)
    reused = _events(again.run_dir, "package_recorded")
    assert {e["sha256"] for events in reused.values() for e in events} == {first["sha256"]}
    assert all(e["reused"] for events in reused.values() for e in events)
    markdown = write_report(again.run_dir).markdown.read_text(encoding="utf-8")
    assert f"| C-K04#0 | {first['sha256']} |" in markdown
    # The follow-up arm browsed the site it was judging: the start page and every page of
    # the recording answered, at this attempt's origin (the stored one's port is closed).
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert len(seen) >= 2 and set(seen.values()) == {200}, seen
    (evidence,) = _events(outcome.run_dir, "session_evidence")["follow-up"]
    assert len(evidence["evidence"]["audit_paths"]) >= len(seen)  # its GETs, in the audit log


def test_a_session_whose_worst_case_would_cross_the_ceiling_never_starts(tmp_path: Path) -> None:
    # Each session costs $0.20 (measured, reported by the engine) and reserves the task's
    # declared worst case, $0.272, before it starts. With $19.50 spent in calibration under
    # the $20 ceiling: P02 (19.50 + 0.272) and P03 (19.70 + 0.272) start; P04 would reach
    # 19.90 + 0.272 = 20.172 and never starts. The rest of the run is not_run.
    usage = {"model": "m", "input_tokens": 10, "cost_usd": 0.2, "provenance": "measured"}
    engine = tmp_path / "engine.py"
    engine.write_text(f"import json\nprint(json.dumps({ {**REPORT, 'usage': [usage]}!r}))\n")
    argv = {"engine": "command", "argv": [sys.executable, str(engine)]}
    tasks = ["p02", "p03", "p04", "p06"]
    exp = _study(tmp_path, tasks, {"heuristic": argv}, concurrency=1, prior_spend_usd=19.5)
    write_lock(load_experiment(exp), servers=False)
    outcome = start_run(exp, tmp_path / "runs", run_seed=3, case_set="held-out")
    assert "ceiling" in outcome.status and "$19.5000 of it before this run" in outcome.status
    results = {
        p.parent.name: json.loads(p.read_bytes())["outcome"]
        for p in (outcome.run_dir / "results").rglob("*.json")
    }
    ran = [results[t] for t in tasks]
    assert "not_run" not in ran[:2] and ran[2:] == ["not_run", "not_run"], results
    markdown = write_report(outcome.run_dir).markdown.read_text(encoding="utf-8")
    assert "| not_run | 2 | never started" in markdown
    card = json.loads((outcome.run_dir / "results.json").read_text(encoding="utf-8"))
    metrics = card["heuristic"]["metrics"]
    # not_run is scored as nothing: P04 and P06 are recall misses in the full denominator.
    assert metrics["recall"]["n"] == 10 and metrics["recall"]["k"] == 0
    # An answer that is no session evidence (a damaged result) is scored as nothing too,
    # not a report that cannot be written.
    p02 = next((outcome.run_dir / "results").rglob("p02/*.json"))
    p02.write_text(json.dumps({**json.loads(p02.read_bytes()), "final_answer": "{oops"}))
    write_report(outcome.run_dir)
    card = json.loads((outcome.run_dir / "results.json").read_text(encoding="utf-8"))
    assert "P02 (e2e, trial 0): not run, scored as nothing" in card["heuristic"]["flagged"]


def test_a_subset_of_the_heuristic_held_out_run_fills_every_confusion_column(
    tmp_path: Path,
) -> None:
    # The whole held-out run is bench/attribution_heldout.py (about 4 minutes); these four
    # product failures are where the heuristic engine lands in each column of the matrix:
    # P06 blamed and supported, P08 blamed on an unsupported target, P09 set aside, P10
    # nothing. Offline, deterministic, frozen and verified like the real run.
    tasks = ["p06", "p08", "p09", "p10"]
    exp = _study(tmp_path, tasks, {"heuristic": {"engine": "heuristic"}})
    write_lock(load_experiment(exp), servers=False)
    outcome = start_run(exp, tmp_path / "runs", run_seed=1, case_set="held-out")
    assert outcome.status == "complete"
    write_report(outcome.run_dir)
    card = json.loads((outcome.run_dir / "results.json").read_text(encoding="utf-8"))
    card = card["heuristic"]
    ran = {
        s["case"]: (s["outcome"], s["supported"]) for s in card["sessions"] if s["status"] == "ran"
    }
    assert ran == {
        "P06": ("blamed", 1), "P08": ("blamed", 0), "P09": ("set_aside", 0), "P10": ("nothing", 0)
    }  # fmt: skip
    (product,) = [r for r in card["confusion"] if r["by"] == "truth" and r["label"] == "PRODUCT"]
    cells = {column: cell["count"] - cell["not_run"] for column, cell in product["cells"].items()}
    assert cells == {
        "blamed_supported": 1, "blamed_unsupported_only": 1, "set_aside": 1, "nothing": 1
    }  # fmt: skip
    metrics = card["metrics"]
    assert (metrics["recall"]["k"], metrics["recall"]["n"]) == (1, 10)  # the rest not run
    assert (metrics["precision"]["k"], metrics["precision"]["n"]) == (1, 2)
