"""Contained local engines, attacked: an engine that tries every path a held-out cheater used
(``cheater/engine.py``) learns nothing in the sandbox and reads the answers without it; a
held-out run that cannot be contained is refused before its first session."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers.common import skip_outside_ci
from pairbench import start_run, write_report
from pairbench._errors import RunRefused, SpecError
from pairbench.freeze import write_lock
from pairbench.spec import load_experiment
from pairbench.studies.attribution_reliability import STUDY
from pairbench.studies.attribution_reliability.engines import EngineSpec, engine_identity
from pairbench.studies.attribution_reliability.engines._contain import ENV_BWRAP, probe

pytestmark = pytest.mark.whole_run

CHEATER = Path(__file__).parent / "cheater" / "engine.py"
PRODUCT = [f"p{i:02d}" for i in range(1, 11)]
"""The ten held-out PRODUCT cases: the denominator of recall."""


def _needs_bwrap() -> None:
    found = probe()
    if not found.ok:
        skip_outside_ci(f"containment is unavailable: {found.reason} (make system-deps)")


def _study(tmp_path: Path, tasks: list[str], arms: dict[str, dict[str, Any]]) -> Path:
    root = tmp_path / "study"
    shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "experiment.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tasks"] = [{**t, "trials": 1} for t in data["tasks"] if t["id"] in tasks]
    data["arms"] = {
        name: {"agent": {"adapter": "attribution-engine", "settings": {"engine": engine}}}
        for name, engine in arms.items()
    }
    if len(arms) > 1:
        data.pop("descriptive", None)
    data["budget"].update({"start_stagger_s": 0, "concurrency": 2})
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _engine(tmp_path: Path, script: Path, **spec: Any) -> dict[str, Any]:
    # In a folder of its own beside the experiment and the runs, as a user would keep it.
    folder = tmp_path / "engine"
    folder.mkdir(exist_ok=True)
    shutil.copyfile(script, folder / script.name)
    return {"engine": "command", "argv": [sys.executable, str(folder / script.name)], **spec}


def _sessions(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((run_dir / "results").rglob("*.json")):
        result = json.loads(path.read_bytes())
        session = json.loads(result["final_answer"])
        found.setdefault(result["arm"], []).append(session)
    return found


def _saw(session: dict[str, Any]) -> dict[str, Any]:
    """What the cheater says it saw (its set-aside item ``SAW {...}``)."""
    report = session["report"]
    assert report is not None, session["failure"]
    (line,) = [s["summary"] for s in report["set_aside"] if s["summary"].startswith("SAW ")]
    saw: dict[str, Any] = json.loads(line.removeprefix("SAW "))
    return saw


def test_a_contained_cheater_learns_nothing_and_an_uncontained_one_reads_the_answers(
    tmp_path: Path,
) -> None:
    _needs_bwrap()
    contained = _engine(tmp_path, CHEATER)
    leaky = {**contained, "contained": False}
    exp = _study(tmp_path, PRODUCT, {"contained": contained, "leaky": leaky})
    write_lock(load_experiment(exp), servers=False)
    outcome = start_run(exp, tmp_path / "runs", run_seed=3, case_set="held-out")
    assert outcome.status == "complete"
    sessions = _sessions(outcome.run_dir)
    assert len(sessions["contained"]) == len(sessions["leaky"]) == 10
    for session in sessions["contained"]:
        saw = _saw(session)
        # No manifest, lock or run folder anywhere it could look; HOME empty; /proc holds
        # only the sandbox's own processes (bwrap's init and the engine), its parent one.
        assert saw["manifests"] == saw["locks"] == saw["run_folders"] == saw["home"] == []
        assert max(saw["pids"]) < 10 and saw["ppid"] == 1, saw
    for session in sessions["leaky"]:
        saw = _saw(session)
        # The detector fires: on the host the same engine finds the run and the answers.
        assert saw["manifests"] and saw["run_folders"], saw
        assert any(str(outcome.run_dir) == f for f in saw["run_folders"]), saw
    write_report(outcome.run_dir)
    results = json.loads((outcome.run_dir / "results.json").read_bytes())
    recall = {arm: card["metrics"]["recall"] for arm, card in results.items()}
    assert recall["contained"]["n"] == 10 and recall["contained"]["k"] <= 2
    assert recall["leaky"]["k"] == 10  # it blamed exactly the right sites
    # It never opened a site: the sites' own audit says so, whatever its report claims.
    assert len(results["contained"]["never_visited"]) == 10
    assert len(results["leaky"]["never_visited"]) == 10
    report = (outcome.run_dir / "report.md").read_text(encoding="utf-8")
    top = report[report.index("Attribution reliability") :]
    line = "Engine command of arm leaky ran uncontained (contained: false)"
    assert line in top and top.index(line) < top.index("These controlled cases")
    assert "arm contained ran uncontained" not in report
    assert report.count("NEVER VISITED") >= 20


def test_a_held_out_run_that_cannot_be_contained_is_refused_and_calibration_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A bwrap that is not there: containment is unavailable (the probe runs the real thing).
    monkeypatch.setenv(ENV_BWRAP, str(tmp_path / "no-bwrap"))
    assert not probe().ok
    script = tmp_path / "home.py"
    script.write_text(
        "import json, os, sys\nsys.stdin.read()\nprint(json.dumps({'status': 'completed', "
        "'set_aside': [{'summary': 'HOME ' + os.environ['HOME'], 'reason': 'out_of_scope'}]}))\n",
        encoding="utf-8",
    )
    exp = _study(tmp_path, ["p01", "c-p01"], {"mine": _engine(tmp_path, script)})
    with pytest.raises(RunRefused) as refused:
        start_run(exp, tmp_path / "runs", run_seed=1, case_set="held-out")
    message = str(refused.value)
    assert message.startswith("refusing a held-out run: arm 'mine': the command engine")
    assert "no-bwrap' is not installed" in message
    assert "install bubblewrap" in message and "make system-deps" in message
    assert "contained: false" in message
    assert not list((tmp_path / "runs").glob("*/run.json"))  # refused before any session
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)  # calibration: runs, warned
    assert outcome.status == "complete"
    assert "runs it uncontained" in capsys.readouterr().err
    ((session,),) = _sessions(outcome.run_dir).values()
    home = session["report"]["set_aside"][0]["summary"]
    assert home.startswith("HOME /") and home != "HOME /home/engine"


def test_the_identity_records_containment(tmp_path: Path) -> None:
    script = tmp_path / "engine" / "engine.py"
    script.parent.mkdir()
    script.write_text("pass\n", encoding="utf-8")
    spec = {"engine": "command", "argv": [sys.executable, str(script)]}
    known = ["command", "python", "http", "heuristic"]
    assert engine_identity(EngineSpec.parse(spec, known=known), tmp_path).contained is True
    off = EngineSpec.parse({**spec, "contained": False}, known=known)
    assert engine_identity(off, tmp_path).contained is False
    heuristic = EngineSpec.parse({"engine": "heuristic"})
    assert engine_identity(heuristic, tmp_path).contained is None  # pairbench's own code
    with pytest.raises(SpecError, match=r"engine\.contained: an http engine runs elsewhere"):
        EngineSpec.parse({"engine": "http", "url": "http://127.0.0.1:1", "contained": False})


def test_an_engine_in_the_experiment_folder_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "engine.py"
    script.write_text("pass\n", encoding="utf-8")
    spec = EngineSpec.parse({"engine": "command", "argv": [sys.executable, str(script)]})
    with pytest.raises(SpecError, match=r"lives in the experiment's folder .* contained: false"):
        engine_identity(spec, tmp_path)
    off = spec.model_copy(update={"contained": False})
    assert engine_identity(off, tmp_path).contained is False


PEEKER = """
import importlib, json, os, pathlib
import pairbench
from pairbench.studies.attribution_reliability.engines import EngineReport, SetAside


class Peeker:
    def __init__(self, settings):
        self.settings = settings

    def scan(self, request):
        # Everything pairbench it can import: manifests anywhere under its package folders?
        roots = [pathlib.Path(p) for p in pairbench.__path__]
        found = sorted(str(p) for r in roots for p in r.rglob("*.json"))
        try:
            importlib.import_module("pairbench.studies.attribution_reliability._manifest")
            manifest = "imported"
        except ImportError:
            manifest = "missing"
        saw = {"json": found, "manifest": manifest, "proc": sorted(
            p for p in os.listdir("/proc") if p.isdigit())}
        return EngineReport(status="completed", set_aside=[
            SetAside(summary="SAW " + json.dumps(saw), reason="out_of_scope")])

    judge = scan
"""


@pytest.mark.parametrize("contained", [True, False])
def test_a_python_engine_gets_the_engine_api_and_nothing_else_of_pairbench(
    tmp_path: Path, contained: bool
) -> None:
    import asyncio

    from pairbench.studies.attribution_reliability.engines import (
        EngineRequest,
        Persona,
        run_engine,
    )

    if contained:
        _needs_bwrap()
    folder = tmp_path / "engine"
    folder.mkdir()
    (folder / "peeker.py").write_text(PEEKER, encoding="utf-8")
    spec = EngineSpec.parse(
        {"engine": "python", "target": "peeker:Peeker", "path": [str(folder)],
         "contained": contained}
    )  # fmt: skip
    request = EngineRequest(
        mode="scan", start_url="http://127.0.0.1:9/v/x", model_seed=1,
        personas=[Persona(user="u1", goal="g")],
    )  # fmt: skip
    outcome = asyncio.run(run_engine(spec, request, env=os.environ, workdir=tmp_path / "w"))
    assert outcome.report is not None, outcome.message
    saw = json.loads(outcome.report.set_aside[0].summary.removeprefix("SAW "))
    if contained:
        assert saw["json"] == [] and saw["manifest"] == "missing"
        assert len(saw["proc"]) <= 3  # bwrap's init, the worker (and nothing of the host)
    else:  # the detector fires: on the host, pairbench's study data is right there
        assert any(p.endswith("cases.json") for p in saw["json"])
        assert saw["manifest"] == "imported"
