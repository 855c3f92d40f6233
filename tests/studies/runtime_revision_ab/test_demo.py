"""``pairbench demo --study runtime-revision-ab``'s flow on a cut-down copy of the study: the
study prepared once, screening, a confirmation plan written, approved as a demo and run,
both reported, nothing left running."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import psutil
import pytest
from ruamel.yaml import YAML

from helpers.demo_numbers import assert_same_numbers
from helpers.report_checks import check_proxy_usage_is_never_unmeasured
from pairbench.freeze._verify_run import verify_run
from pairbench.studies import Study
from pairbench.studies.runtime_revision_ab import STUDY, prepare
from pairbench.studies.runtime_revision_ab import _demo as _demo_campaign

pytestmark = pytest.mark.whole_run


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _small_study(root: Path) -> Study:
    """The study with one scenario (AR-007, the candidate's regression), its model on a free
    port."""
    shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    yaml = YAML()
    path = root / "experiment.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] == "ar-007"]
    data["proxy"]["upstream"] = f"http://127.0.0.1:{_free_port()}"
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)
    return Study(name="runtime-revision-ab", title="cut down", root=root, prepare=prepare)


def test_the_demo_screens_plans_approves_confirms_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_demo_campaign, "CONFIRMATION_PAIRS", 2)
    study = _small_study(tmp_path / "study")
    runs = tmp_path / "runs"
    _demo_campaign.campaign_demo(study, runs, run_seed=2, local=False)
    folder = runs / "demo-runtime-revision-ab"
    assert (folder / "minirt" / ".git").is_dir()
    run_dirs = sorted(p for p in runs.iterdir() if p.name.startswith("runtime-revision-ab-"))
    assert len(run_dirs) == 2
    stages = {}
    for run_dir in run_dirs:
        info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        stages[info["stage"]] = (run_dir, info)
        assert (run_dir / "report.md").is_file() and verify_run(run_dir) == []
        check_proxy_usage_is_never_unmeasured(run_dir)
    # Issue 31 moved the study's demo and report code: this seed's numbers (outcomes, the
    # campaigns' counts, the grid) are the ones recorded at 2689c37, before the move.
    for stage, (run_dir, _) in stages.items():
        assert_same_numbers(f"rab-{stage}", run_dir)
    # The declared primary analysis (the core's sign flip over trial indices) and the
    # study's own campaign test (over its graded cells) find the same D_i.
    summary = json.loads((stages["confirmation"][0] / "summary.json").read_text("utf-8"))
    (primary,) = summary["primary"]
    study_d = [d["d"] for d in summary["study"]["data"]["campaign_test"]["differences"]]
    assert primary["test"] == "sign-flip" and primary["differences"] == study_d
    assert primary["p_value"] == summary["study"]["data"]["campaign_test"]["sign_flip_p"]
    screening, confirmation = stages["screening"][0], stages["confirmation"][1]
    (plan_path,) = folder.glob("plan-*.json")
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    assert plan["screening_run"] == screening.name and plan["n_pairs"] == 2
    assert plan["approval"]["by"] == _demo_campaign.APPROVER
    assert confirmation["plan"]["sha256"] == plan["approval"]["plan_sha256"]
    # 2 pairs x 2 arms x 1 scenario, every one graded from its evidence
    results = list((stages["confirmation"][0] / "results").rglob("*.json"))
    assert len(results) == 4
    assert psutil.Process().children(recursive=True) == []
    # A second demo reuses the prepared copy (its repository is not rewritten).
    assert _demo_campaign.demo_folder(study, runs, local=False) == folder / "experiment.yaml"
