"""`pairbench export` over a real (simulated) run: stdout, --out, --force, JUnit, errors."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.export_runs import simulated_run
from pairbench.cli import app
from pairbench.cli._export import ExportFormat
from pairbench.store._export import FORMATS, export_bytes
from pairbench.store._export_rows import FIXED, METRIC_PARTS, METRICS

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated_run(tmp_path_factory.mktemp("export-cli"))


def test_csv_goes_to_stdout_as_the_library_writes_it(run: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pairbench", "export", str(run)],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == export_bytes(run, "csv")
    assert done.stdout.startswith(b"run_id,experiment,arm,task,label.tier,trial,attempt,final,")


def test_jsonl_to_stdout(run: Path) -> None:
    result = runner.invoke(app, ["export", str(run), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == export_bytes(run, "jsonl")


def test_out_never_replaces_a_file_without_force(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "trials.parquet"
    args = ["export", str(run), "--format", "parquet", "--out", str(out)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert out.read_bytes() == export_bytes(run, "parquet")
    out.write_bytes(b"mine")
    again = runner.invoke(app, args)
    assert again.exit_code == 1
    assert f"error: {out} already exists. Fix: pass --force to replace it" in again.stderr
    assert out.read_bytes() == b"mine"
    forced = runner.invoke(app, [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert out.read_bytes() == export_bytes(run, "parquet")


def test_parquet_needs_a_file(run: Path) -> None:
    result = runner.invoke(app, ["export", str(run), "--format", "parquet"])
    assert result.exit_code == 1
    assert "parquet is binary" in result.stderr and "--out" in result.stderr
    assert result.stdout_bytes == b""


def test_an_export_into_the_records_is_refused(run: Path) -> None:
    out = run / "results" / "trials.csv"
    result = runner.invoke(app, ["export", str(run), "--out", str(out)])
    assert result.exit_code == 1
    assert "inside the run's results/ folder" in result.stderr
    assert not out.exists()


def test_junit_file_has_the_junit_shape(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "decisions.xml"
    result = runner.invoke(app, ["export", str(run), "--format", "junit", "--out", str(out)])
    assert result.exit_code == 0, result.output  # written: the CI's JUnit reader gates
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites" and [s.tag for s in root] == ["testsuite"]
    cases = root[0].findall("testcase")
    assert [c.get("name") for c in cases] == ["h1-latency", "h2-tokens", "h3-tier-2"]
    assert [[child.tag for child in c] for c in cases] == [
        ["system-out"],
        ["failure", "system-out"],
        ["error", "system-out"],
    ]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")


def test_junit_without_a_decision_rule_is_refused(tmp_path: Path) -> None:
    bare = simulated_run(tmp_path, hypotheses=False, report=False)
    result = runner.invoke(app, ["export", str(bare), "--format", "junit"])
    assert result.exit_code == 1
    assert "no declared comparison has a decision rule" in result.stderr
    assert "Fix: declare one under `hypotheses:`" in result.stderr
    assert result.stdout_bytes == b""


def test_a_folder_that_is_not_a_run_is_one_message(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-run"
    result = runner.invoke(app, ["export", str(missing)])
    assert result.exit_code == 1
    assert "not a pairbench run directory (no run.json)" in result.stderr
    assert "pass the folder that `pairbench run` printed" in result.stderr
    assert "Traceback" not in result.output


def test_the_help_names_every_column_and_metric() -> None:
    assert tuple(ExportFormat) == FORMATS
    env = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    text = runner.invoke(app, ["export", "--help"], env=env).output
    for metric in METRICS:
        assert metric in text, metric
    parts = tuple(f"{m}_{part}" for m in METRICS for part in METRIC_PARTS)
    for column in FIXED:
        if column not in METRICS and column not in parts:
            assert column in text, column
