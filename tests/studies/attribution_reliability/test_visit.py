"""Evidence of the visit from the site's side, through pairbench's runner on real sites:
engines written as a user would (a `command` script, no pairbench import) that never visit,
paste the page, go over the action budget; a budget-stopped run; a truth edited in the
experiment's hashed cases.json."""

from __future__ import annotations

import json
import re
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

pytestmark = pytest.mark.browser

# What an engine author writes from the README: read the request, answer a report.
HEAD = """\
import json, re, sys, urllib.request
request = json.loads(sys.stdin.read())
start = request["start_url"]
def get(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.read().decode("utf-8", "replace")
def report(findings):
    print(json.dumps({"schema": "pairbench.attribution.report/1", "status": "completed",
                      "findings": findings}))
def finding(headline, evidence):
    return {"id": "f1", "headline": headline, "claim_scope": "product_behavior",
            "evidence": {"text": evidence, "users": ["u1"]}}
"""
NEVER = HEAD + 'report([finding("The phone field rejects a valid number", "it did")])\n'
PASTE = HEAD + (
    "page = get(start)\n"
    "words = ' '.join(re.sub(r'<[^>]+>', ' ', re.sub(r'(?s)<(script|style).*?</\\1>', '', page))"
    ".split())\n"
    'report([finding("The phone field rejects a valid number", words)])\n'
)
BUSY = HEAD + "for _ in range(12):\n    get(start)\nreport([])\n"


def _experiment(
    tmp_path: Path,
    tasks: list[str],
    body: str,
    *,
    edit: Any = None,
    settings: dict[str, Any] | None = None,
    **budget: Any,
) -> Path:
    """The study's experiment, cut to ``tasks``, run by the engine ``body``, frozen."""
    root = tmp_path / "study"
    shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    if edit is not None:
        cases = json.loads((root / "cases.json").read_text(encoding="utf-8"))
        edit(cases)
        (root / "cases.json").write_text(json.dumps(cases, indent=1), encoding="utf-8")
    script = tmp_path / "engine.py"
    script.write_text(body, encoding="utf-8")
    path = root / "experiment.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] in tasks]
    data["agent"]["settings"] = {
        "engine": {"engine": "command", "argv": [sys.executable, str(script)]},
        **(settings or {}),
    }
    data["budget"] |= {"start_stagger_s": 0, "concurrency": 1, **budget}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    write_lock(load_experiment(path), servers=False)
    return path


def _held_out(exp: Path, runs: Path) -> tuple[Path, dict[str, Any], str, str]:
    outcome = start_run(exp, runs, run_seed=3, case_set="held-out")
    paths = write_report(outcome.run_dir)
    card = json.loads((outcome.run_dir / "results.json").read_text(encoding="utf-8"))
    markdown = paths.markdown.read_text(encoding="utf-8")
    return outcome.run_dir, card["heuristic"], markdown, paths.html.read_text(encoding="utf-8")


def _session(card: dict[str, Any], case: str, trial: int = 0) -> dict[str, Any]:
    return next(s for s in card["sessions"] if s["case"] == case and s["trial"] == trial)


def test_an_engine_that_never_visits_reads_never_visited(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, ["p02", "t02"], NEVER)
    run_dir, card, markdown, html = _held_out(exp, tmp_path / "runs")
    for case in ("P02", "T02"):
        session = _session(card, case)
        assert session["never_visited"] is True and session["site_requests"] == 0
        assert session["published"] == 1
    assert _session(card, "P02")["met_target"] is False  # by the site; T02 is no PRODUCT case
    assert [n.split(" ")[0] for n in card["never_visited"]] == ["P02", "T02"]
    assert "**Never visited: in 2 end-to-end session(s)" in markdown
    assert "| P02 | 0 | NEVER VISITED |" in markdown
    assert "NEVER VISITED" in html and "Never visited: in 2 end-to-end session(s)" in html
    # results.json names the run, its lock, the sitting and the engine as it ran.
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert (card["run_id"], card["lock_sha256"], card["sitting"]) == (
        run["run_id"], run["lock_sha256"], 1,
    )  # fmt: skip
    assert card["engine_identity"]["adapter"] == "command"
    assert card["engine_identity"]["source_path"] == str(tmp_path / "engine.py")
    assert card["engine_identity"]["source_sha256"]
    assert {m["source"] for m in card["manifests"]} == {"experiment"}


def test_an_engine_that_pastes_the_page_is_listed_as_evidence_stuffing(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, ["p02"], PASTE)
    _, card, markdown, _ = _held_out(exp, tmp_path / "runs")
    session = _session(card, "P02")
    assert session["never_visited"] is False and session["site_pages"] == ["/"]
    (evidence,) = session["evidence"]
    assert evidence["stuffing"] and evidence["share"] > 0.9 and evidence["page"] == "/"
    assert evidence["chars"] > 200 and evidence["page_words"] >= 30
    assert len(card["evidence_stuffing"]) == 1 and "P02" in card["evidence_stuffing"][0]
    assert "EVIDENCE STUFFING" in markdown
    # Beside the score, never in it: the pasted finding still counts as published.
    assert card["metrics"]["precision"]["n"] == 1


def test_a_short_quote_is_not_evidence_stuffing(tmp_path: Path) -> None:
    body = HEAD + 'get(start)\nreport([finding("Phone", "The phone field said no")])\n'
    exp = _experiment(tmp_path, ["p02"], body)
    _, card, _, _ = _held_out(exp, tmp_path / "runs")
    (evidence,) = _session(card, "P02")["evidence"]
    assert not evidence["stuffing"] and evidence["share"] < 0.5
    assert card["evidence_stuffing"] == []


def test_an_engine_over_the_action_budget_is_flagged(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, ["t02"], BUSY)
    _, card, markdown, _ = _held_out(exp, tmp_path / "runs")
    session = _session(card, "T02")
    assert session["site_actions"] == 12 and session["site_requests"] == 12
    assert session["over_budget"] == ["12 actions > 10"]
    assert card["over_budget"] == ["T02 (e2e, trial 0): 12 actions > 10"]
    assert "12 actions > 10" in markdown


def test_an_engine_past_the_time_budget_is_flagged(tmp_path: Path) -> None:
    # The protocol's 130 s a user, cut to 1 s: the site saw the last request at ~2.5 s.
    slow = HEAD + "import time\nget(start)\ntime.sleep(2.5)\nget(start)\nreport([])\n"
    exp = _experiment(tmp_path, ["t02"], slow, settings={"budget": {"seconds_per_user": 1}})
    _, card, markdown, _ = _held_out(exp, tmp_path / "runs")
    session = _session(card, "T02")
    assert session["site_actions"] == 2  # within the 10 actions: only the time is over
    (why,) = session["over_budget"]
    assert re.fullmatch(r"last request at [23] s > 1 s", why), why
    assert card["over_budget"] == [f"T02 (e2e, trial 0): {why}"]
    assert why in markdown
    # At the protocol's 130 s, the same engine is within budget.
    exp = _experiment(tmp_path / "default", ["t02"], slow)
    _, card, _, _ = _held_out(exp, tmp_path / "default" / "runs")
    assert _session(card, "T02")["over_budget"] == [] and card["over_budget"] == []


def test_a_budget_stopped_run_counts_only_completed_triples(tmp_path: Path) -> None:
    # Each session costs $0.25 and reserves $0.272: a $0.60 ceiling stops P01's third run.
    spends = HEAD + (
        'print(json.dumps({"schema": "pairbench.attribution.report/1", "status": "completed",'
        ' "usage": [{"model": "m", "cost_usd": 0.25, "provenance": "measured"}]}))\n'
    )
    exp = _experiment(tmp_path, ["p01"], spends, cost_ceiling_usd=0.6)
    _, card, markdown, _ = _held_out(exp, tmp_path / "runs")
    statuses = [_session(card, "P01", t)["status"] for t in (0, 1, 2)]
    assert "not_run" in statuses and statuses[0] != "not_run"
    repeat = card["metrics"]["repeatability"]
    assert (repeat["k"], repeat["n"], repeat["not_run"]) == (0, 0, 10)  # never "10/10"
    assert card["metrics"]["recall"]["not_run"] == 9  # P02..P10 of P01..P10
    assert card["not_run"] == 80 - statuses.count("ran")
    section = markdown[markdown.index("## Attribution reliability") :]
    assert section.split("\n\n")[1].startswith(f"**Not run: {card['not_run']} of 80 held-out")
    assert "| 7. Repeatability | 0/0 | undefined | undefined | same blamed flag" in markdown


def _retarget(cases: dict[str, Any]) -> None:
    for case in cases["cases"]:
        if case["id"] == "P02":
            case["target_terms"] = ["number field"]


def test_a_truth_edited_in_the_hashed_cases_json_changes_the_score(tmp_path: Path) -> None:
    body = HEAD + 'get(start)\nreport([finding("The number field refuses me", "no")])\n'
    before = _held_out(_experiment(tmp_path / "a", ["p02"], body), tmp_path / "a" / "runs")[1]
    exp = _experiment(tmp_path / "b", ["p02"], body, edit=_retarget)
    run_dir, after, _, _ = _held_out(exp, tmp_path / "b" / "runs")
    assert before["metrics"]["recall"]["k"] == 0  # "number field" is no target of P02's
    assert after["metrics"]["recall"]["k"] == 1  # the experiment's hashed copy says it is
    assert after["manifests"][0]["sha256"] != before["manifests"][0]["sha256"]
    trial = json.loads(next((run_dir / "results").rglob("*.json")).read_bytes())
    assert trial["outcome"] == "passed"  # the grader read the same copy
    # Edited again after the run: no copy has the hashed bytes, so nothing is scored.
    cases = exp.parent / "cases.json"
    cases.write_text(cases.read_text(encoding="utf-8").replace("number field", "x"))
    write_report(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    missing = json.dumps(summary["study"])
    assert "is not the" in missing and "lock.json hashed" in missing
    assert "restore" in missing
