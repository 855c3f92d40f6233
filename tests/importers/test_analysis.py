"""An import's analysis registered before the data: frozen, its ledger, before/after per log."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.common import skip_outside_ci
from pairbench._errors import ImportRefused
from pairbench.cli import app
from pairbench.freeze._ledger import read_ledger

DATA = Path(__file__).parent / "data"
ANALYSIS = """\
id: mock-pair
version: 1.0.0
importer: inspect
metric: includes
arms:
  base: {logs: ["logs/base.eval"]}
  cand: {model: mockllm/model}
primary:
  - arms: [cand, base]
    test: mcnemar-exact
    alpha: 0.05
    sided: greater
"""


@pytest.fixture
def study(tmp_path: Path) -> Path:
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        skip_outside_ci("inspect_ai is not importable (pip install 'pairbench[inspect]')")
    (tmp_path / "logs").mkdir()
    shutil.copy(DATA / "inspect_a.eval", tmp_path / "logs" / "base.eval")
    (tmp_path / "analysis.yaml").write_text(ANALYSIS)
    frozen = CliRunner().invoke(app, ["freeze-analysis", str(tmp_path / "analysis.yaml")])
    assert frozen.exit_code == 0, frozen.output
    # The candidate's log, made "after" the freeze: Inspect's own JSON log of the same task,
    # with its header's creation time moved past the freeze (the one field changed).
    log = json.loads((DATA / "inspect_a2.json").read_text())
    log["eval"]["created"] = "2100-01-01T00:00:00+00:00"
    (tmp_path / "logs" / "cand.json").write_text(json.dumps(log))
    return tmp_path


def _import(study: Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        [
            "import",
            "inspect",
            str(study / "logs/base.eval"),
            str(study / "logs/cand.json"),
            "--runs-dir",
            str(study / "runs"),
            "--experiment",
            str(study / "analysis.yaml"),
        ],
    )
    return result.exit_code, result.output


def test_the_report_dates_each_log_against_the_freeze(study: Path) -> None:
    code, output = _import(study)
    assert code == 0, output
    (run,) = (study / "runs").iterdir()
    assert CliRunner().invoke(app, ["report", str(run)]).exit_code == 0
    text = (run / "report.md").read_text()
    assert "was frozen at" in text
    assert f"{study / 'logs/base.eval'} was created before the analysis was frozen" in text
    cand = f"{study / 'logs/cand.json'} was created after the analysis was frozen"
    assert cand + " (by its own header's timestamp); it was NOT named in advance" in text
    summary = json.loads((run / "summary.json").read_text())
    assert [(p["a"], p["b"], p["sided"]) for p in summary["primary"]] == [
        ("cand", "base", "greater")
    ]
    ledger = read_ledger(study / "analysis.ledger.jsonl")
    assert [e.kind for e in ledger] == ["freeze", "run"]
    assert ledger[1].imported_logs == {
        str((study / "logs/base.eval").resolve()): run_log_sha(run, "base"),
        str((study / "logs/cand.json").resolve()): run_log_sha(run, "cand"),
    }


def run_log_sha(run: Path, arm: str) -> str:
    logs = json.loads((run / "run.json").read_text())["imported"]["logs"]
    return str(next(log["facts"]["sha256"] for log in logs if arm in log["arms"].values()))


def test_a_log_changed_since_its_first_import_is_named(study: Path) -> None:
    assert _import(study)[0] == 0
    cand = study / "logs/cand.json"
    cand.write_text(cand.read_text().replace('"variant": "a"', '"variant": "a" '))
    code, output = _import(study)
    assert code == 0, output
    runs = sorted((study / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
    vouch = json.loads((runs[-1] / "run.json").read_text())["imported"]["vouch"]
    assert any("CHANGED since its first import under this analysis" in v for v in vouch)


def test_an_analysis_edited_after_the_freeze_is_refused(study: Path) -> None:
    path = study / "analysis.yaml"
    path.write_text(path.read_text().replace("sided: greater", "sided: two-sided"))
    code, output = _import(study)
    assert code == 2
    assert "changed since it was frozen" in output
    assert not (study / "runs").exists()


def test_an_option_the_analysis_fixed_cannot_be_overridden(study: Path) -> None:
    from pairbench.importers._api import import_logs

    with pytest.raises(ImportRefused, match=r"--option scorer=other contradicts .*includes"):
        import_logs(
            "inspect",
            [study / "logs/base.eval", study / "logs/cand.json"],
            study / "runs",
            options={"scorer": "other"},
            experiment=study / "analysis.yaml",
        )
