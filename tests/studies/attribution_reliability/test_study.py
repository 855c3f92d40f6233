"""The study end to end through pairbench's runner: the experiment against its manifests,
what an engine receives, infra, runtime failures, escaping, the lock and the reference
engines on the real manifests."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pairbench import start_run, write_report
from pairbench._errors import PairbenchError
from pairbench.freeze import verify_experiment, write_lock
from pairbench.spec import load_experiment
from pairbench.studies.attribution_reliability import STUDY, AttributionAdapter
from pairbench.studies.attribution_reliability._manifest import (
    REPEAT_SUBSET,
    load_cases,
    load_packages,
)
from pairbench.studies.attribution_reliability._reference import (
    AlwaysBlameEngine,
    NeverBlameEngine,
    OracleEngine,
)
from pairbench.studies.attribution_reliability._score import score
from pairbench.studies.attribution_reliability._score_models import SessionRecord
from pairbench.studies.attribution_reliability.engines import EngineRequest, Persona
from pairbench.studies.attribution_reliability.site import SITES, CaseSite

pytestmark = pytest.mark.browser

ORACLE = {"engine": "python", "target": f"{OracleEngine.__module__}:OracleEngine"}
REPORT = {"schema": "pairbench.attribution.report/1", "status": "completed"}


def _copy(tmp_path: Path, tasks: list[str], engine: dict[str, Any], **settings: Any) -> Path:
    root = tmp_path / "study"
    shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "experiment.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] in tasks]
    data["agent"]["settings"] = {"engine": engine, **settings}
    data["budget"]["start_stagger_s"] = 0
    data["budget"]["concurrency"] = 1  # one attempt at a time: the order below is exact
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _engine_script(tmp_path: Path, body: str, **spec: Any) -> dict[str, Any]:
    script = tmp_path / "engine.py"
    script.write_text(body, encoding="utf-8")
    return {"engine": "command", "argv": [sys.executable, str(script)], **spec}


def _results(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_bytes()) for p in sorted((run_dir / "results").rglob("*.json"))]


def test_the_experiment_runs_every_manifest_entry_as_the_protocol_orders() -> None:
    exp = load_experiment(STUDY.experiment_path).experiment
    cases, packages = load_cases(), load_packages()
    assert [t.id for t in exp.tasks] == [
        *(c.lower() for c, v in cases.items() if v.set == "held-out"),
        *(c.lower() for c, v in cases.items() if v.set == "calibration"),
        *(p.lower() for p, v in packages.items() if v.set == "held-out"),
        *(p.lower() for p, v in packages.items() if v.set == "calibration"),
    ]
    for task in exp.tasks:
        name = task.id.upper()
        item = cases.get(name) or packages[name]
        assert task.case_set == item.set
        assert task.phase == (1 if name in packages else 0)
        held_repeat = name in REPEAT_SUBSET
        assert exp.trials_for(task) == (3 if held_repeat else 1)
    held = [t for t in exp.tasks if t.case_set == "held-out"]
    e2e = sum(exp.trials_for(t) for t in held if t.phase == 0)
    assert (len(held), e2e) == (60, 60)  # 40 cases + 20 packages; 40 first runs + 20 repeats
    assert exp.pair_order == "round" and exp.budget.start_stagger_s == 10


def _scan(engine: Any, goal: str) -> Any:
    request = EngineRequest(
        mode="scan", start_url="http://127.0.0.1:1/v/x", model_seed=1,
        personas=[Persona(user="u1", goal=goal)],
    )  # fmt: skip
    return engine.scan(request)


def _records(engine: Any) -> list[SessionRecord]:
    cases, packages = load_cases(), load_packages()
    out = []
    for cid, case in cases.items():
        if case.set != "held-out":
            continue
        for trial in range(3 if cid in REPEAT_SUBSET else 1):
            report = _scan(engine, case.goal)
            out.append(SessionRecord(case=cid, kind="e2e", trial=trial, status="ran",
                                     report=report))  # fmt: skip
    for pid, package in packages.items():
        if package.set != "held-out":
            continue
        request = EngineRequest(
            mode="judge", start_url="http://127.0.0.1:1/v/x", model_seed=1,
            personas=[Persona(user=u.user, goal=u.goal) for u in package.users], sessions=[],
        )  # fmt: skip
        out.append(SessionRecord(case=pid, kind="package", trial=0, status="ran",
                                 report=engine.judge(request)))  # fmt: skip
    return out


def test_reference_engines_on_the_real_manifests() -> None:
    cases, packages = load_cases(), load_packages()
    oracle = score(_records(OracleEngine({})), cases, packages, engine="oracle").metrics
    assert (oracle.recall.k, oracle.recall.n) == (10, 10)
    assert (oracle.false_blame.k, oracle.false_blame.n) == (0, 29)
    always = score(_records(AlwaysBlameEngine({})), cases, packages, engine="always").metrics
    assert (always.false_blame.k, always.false_blame.n) == (29, 29)
    never = score(_records(NeverBlameEngine({})), cases, packages, engine="never").metrics
    assert never.precision.n == 0 and not never.precision.defined


def test_a_recording_engine_receives_only_the_documented_request(tmp_path: Path) -> None:
    body = (
        "import json, pathlib, sys\n"
        "raw = sys.stdin.read()\n"
        "req = json.loads(raw)\n"
        f"pathlib.Path({str(tmp_path)!r}, req['mode'] + '.json').write_text(raw)\n"
        f"print(json.dumps({REPORT!r}))\n"
    )
    # Uncontained: it writes what it received into the test's folder, for the test to read.
    exp = _copy(tmp_path, ["c-p01", "c-k04"], _engine_script(tmp_path, body, contained=False))
    outcome = start_run(exp, tmp_path / "runs", run_seed=4)
    assert outcome.status == "complete"
    scan = json.loads((tmp_path / "scan.json").read_text(encoding="utf-8"))
    judge = json.loads((tmp_path / "judge.json").read_text(encoding="utf-8"))
    documented = {"schema", "mode", "start_url", "personas", "budget", "model_seed"}
    assert set(scan) == documented and set(judge) == documented | {"sessions"}
    case = load_cases()["C-P01"]
    assert scan["personas"] == [{"user": "u1", "goal": case.goal}]
    text = json.dumps(scan).casefold()
    hidden = [case.id, case.case_class, case.truth, case.description, case.fixture,
              *case.target_terms, *case.forbidden_terms, *case.encounter_terms]  # fmt: skip
    assert [v for v in hidden if v.casefold() in text] == []
    package = load_packages()["C-K04"]
    recorded = json.dumps(judge["sessions"])
    secret = [package.id, package.kind, package.description, "planted", "sid", "anchors",
              *(s.sid for s in package.sentences)]  # fmt: skip
    assert [v for v in secret if f'"{v}"' in recorded or v in recorded.split('"')] == []
    assert any(step["sentences"] for s in judge["sessions"] for step in s["steps"])


def test_a_preflight_503_is_infra_retried_once_after_30_s_then_the_run_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.responses import PlainTextResponse

    async def down(request: Any) -> PlainTextResponse:
        return PlainTextResponse("Service Unavailable", status_code=503)

    monkeypatch.setitem(SITES, "test-down", lambda ctx: CaseSite(routes={"": down}))
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(AttributionAdapter, "sleep", no_wait)
    cases = json.loads((STUDY.root / "cases.json").read_text(encoding="utf-8"))
    for case in cases["cases"]:
        case["fixture"] = "test-down"
    manifest = tmp_path / "down-cases.json"
    manifest.write_text(json.dumps(cases), encoding="utf-8")
    exp = _copy(tmp_path, ["c-p01", "c-t01"], {"engine": "heuristic"}, cases=str(manifest))
    outcome = start_run(exp, tmp_path / "runs", run_seed=2)
    # The first trial's re-run failed too: the run stops, naming it.
    assert outcome.status.startswith("stopped: trial heuristic/c-p01/0 failed for infra")
    kept = sorted((outcome.run_dir / "infra").rglob("*.json"))
    p01 = [p.name for p in kept if p.parent.name == "c-p01"]
    assert p01 == ["0.1.json", "0.2.json"]  # the attempt and its one re-run, both kept
    reasons = {json.loads(p.read_bytes())["reason"] for p in kept}
    assert all("503" in r and "30 s later" in r for r in reasons)
    assert waits == [30.0] * len(kept)  # each attempt's preflight waited once, 30 s


def test_an_engine_crash_is_a_runtime_failure_scored_on_nothing(tmp_path: Path) -> None:
    exp = _copy(tmp_path, ["c-p01"], _engine_script(tmp_path, "import sys\nsys.exit(3)\n"))
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    (result,) = _results(outcome.run_dir)
    assert result["outcome"] == "agent_error" and "crash" in result["reason"]
    session = json.loads(result["final_answer"])
    assert session["failure"]["kind"] == "crash" and session["report"] is None


def test_script_in_a_finding_renders_as_text(tmp_path: Path) -> None:
    finding = {"id": "f1", "headline": "<script>alert(1)</script>", "claim_scope": "usability",
               "evidence": {"text": "x", "users": ["u1"]}}  # fmt: skip
    report = {**REPORT, "findings": [finding]}
    body = f"import json\nprint(json.dumps({report!r}))\n"
    exp = _copy(tmp_path, ["c-t01"], _engine_script(tmp_path, body))
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    html = write_report(outcome.run_dir).html.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)" not in html


def test_a_changed_byte_fails_verify_and_refuses_the_held_out_run(tmp_path: Path) -> None:
    exp = _copy(tmp_path, ["p02", "c-p01"], ORACLE)
    write_lock(load_experiment(exp), servers=False)
    assert verify_experiment(exp) == []
    outcome = start_run(exp, tmp_path / "runs", run_seed=1, case_set="held-out")
    paths = write_report(outcome.run_dir)
    card = json.loads((outcome.run_dir / "results.json").read_text(encoding="utf-8"))
    metrics = card["heuristic"]["metrics"]
    assert metrics["recall"]["k"] == 1 and metrics["recall"]["n"] == 10  # P02; the rest not run
    review = outcome.run_dir / "manual_review.json"
    review.write_text(json.dumps({"notes": {"P02": {"by": "t", "note": "read it"}}}))
    write_report(outcome.run_dir)
    again = json.loads((outcome.run_dir / "results.json").read_text(encoding="utf-8"))
    assert again["heuristic"]["manual_review"] == {"P02": "read it (t)"}
    assert again["heuristic"]["metrics"] == metrics  # a note changes no number
    markdown = paths.markdown.read_text(encoding="utf-8")
    assert "not prediction of real-human behavior" in markdown
    # The metrics replace the pass rate; each trial outcome says how it enters them.
    assert "Success (passed / scored)" not in markdown and "Outcomes by arm" not in markdown
    assert "| passed | 1 | the session's attribution was right" in markdown  # P02
    assert markdown.index("Primary metric") < markdown.index("Trial outcomes and how each")
    cases = exp.parent / "cases.json"
    cases.write_bytes(cases.read_bytes().replace(b"}", b"} ", 1))
    assert [m.kind for m in verify_experiment(exp)] == ["file"]
    with pytest.raises(PairbenchError, match="does not match its lock"):
        start_run(exp, tmp_path / "runs2", run_seed=1, case_set="held-out")
