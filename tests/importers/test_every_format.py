"""Every built-in importer's run works with every command, as an Inspect import does.

Issue 37's acceptance asks ``compare``, ``view``, ``export --format parquet`` and ``verify``
of an imported lm-eval samples folder, promptfoo results file and CSV, not only ``report``.
Each is imported through the CLI from real logs (lm-evaluation-harness 0.4.13 and promptfoo
0.121.20, made in the suite), then read by each command; an edit to the imported file after
the import makes ``verify`` fail naming it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.harness_logs import LmEvalLogs, PromptfooLogs
from pairbench.cli import app

Made = tuple[list[str], Path]
"""The ``pairbench import`` arguments after the importer's name, and the file to edit."""


def _lm_eval(request: pytest.FixtureRequest, tmp_path: Path) -> Made:
    logs: LmEvalLogs = request.getfixturevalue("lm_eval_logs")
    samples = sorted(logs.b.parent.glob("samples_arith_add_*.jsonl"))
    assert samples, f"no samples file beside {logs.b}"
    return [str(logs.a), str(logs.b)], samples[0]


def _promptfoo(request: pytest.FixtureRequest, tmp_path: Path) -> Made:
    logs: PromptfooLogs = request.getfixturevalue("promptfoo_logs")
    return [str(logs.providers)], logs.providers


def _table(request: pytest.FixtureRequest, tmp_path: Path) -> Made:
    path = tmp_path / "scores.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "model", "correct"])
        for i in range(10):
            writer.writerow([f"q{i}", "base", int(i % 2 == 0)])
            writer.writerow([f"q{i}", "cand", int(i % 3 != 1)])
    options = ["-o", "id=question", "-o", "arm=model", "-o", "outcome=correct"]
    return [str(path), *options], path


FORMATS: dict[str, Callable[[pytest.FixtureRequest, Path], Made]] = {
    "lm-eval": _lm_eval,
    "promptfoo": _promptfoo,
    "table": _table,
}


@pytest.mark.parametrize(
    "importer",
    # lm-eval and promptfoo logs are made by running those harnesses: `make test` only.
    [pytest.param(name, marks=pytest.mark.harness) for name in ("lm-eval", "promptfoo")]
    + ["table"],
)
def test_every_command_reads_the_imported_run(
    importer: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    args, log = FORMATS[importer](request, tmp_path)
    runner = CliRunner()
    runs = tmp_path / "runs"
    made = runner.invoke(app, ["import", importer, *args, "--runs-dir", str(runs)])
    assert made.exit_code == 0, made.output
    run = Path(made.stdout.strip().splitlines()[-1])

    reported = runner.invoke(app, ["report", str(run)])
    assert reported.exit_code == 0, reported.output
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    (pair,) = summary["pairs"]
    assert pair["pairs"] > 0 and pair["unmatched_a"] == pair["unmatched_b"] == 0

    compared = runner.invoke(app, ["compare", str(run), str(run)])
    assert compared.exit_code == 0, compared.output

    out = tmp_path / "trials.parquet"
    exported = runner.invoke(app, ["export", str(run), "--format", "parquet", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    import pyarrow.parquet as pq

    table = pq.read_table(out).to_pylist()
    stored = sum(1 for _ in (run / "results").rglob("*.json"))
    assert len(table) == stored > 0
    assert {row["arm"] for row in table} == {a["arm"] for a in summary["arms"]}

    from starlette.testclient import TestClient

    from pairbench.view import create_app

    client = TestClient(create_app(runs, port=8765), base_url="http://127.0.0.1:8765")
    page = client.get(f"/runs/{run.name}/report")
    assert page.status_code == 200
    assert "Imported: trials run by another harness" in page.text
    listing = client.get(f"/runs/{run.name}/trials.json").json()
    assert listing["total"] == len(table)
    first = listing["trials"][0]
    trial = client.get(first["url"])
    assert trial.status_code == 200 and first["task"] in trial.text

    verified = runner.invoke(app, ["verify", str(run)])
    assert verified.exit_code == 0, verified.output
    saved = log.read_bytes()
    log.write_bytes(saved + b"\n")
    try:
        edited = runner.invoke(app, ["verify", str(run)])
        assert edited.exit_code != 0, edited.output
        assert "imported-log" in edited.output and log.name in edited.output
    finally:
        log.write_bytes(saved)
