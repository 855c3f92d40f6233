"""``pairbench import table``: CSV, JSONL and Parquet through a column mapping."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from pairbench._errors import ImportRefused
from pairbench.importers._api import import_logs

ROWS = [
    # (question, model, repeat, correct, topic)
    *[(f"q{i}", "base", r, int(i % 2 == 0), f"t{i % 3}") for i in range(12) for r in (0, 1)],
    *[
        (f"q{i}", "cand", r, int(i % 2 == 0 or i % 5 == 1), f"t{i % 3}")
        for i in range(12)
        for r in (0, 1)
    ],
]
MAPPING = {
    "id": "question",
    "arm": "model",
    "epoch": "repeat",
    "outcome": "correct",
    "cluster": "topic",
}


def _csv(path: Path, rows: Sequence[tuple[object, ...]] = ROWS) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "model", "repeat", "correct", "topic"])
        w.writerows(rows)
    return path


def _success(run: Path) -> dict[str, tuple[int, int]]:
    from typer.testing import CliRunner

    from pairbench.cli import app

    assert CliRunner().invoke(app, ["report", str(run)]).exit_code == 0
    arms = json.loads((run / "summary.json").read_text())["arms"]
    return {a["arm"]: (a["success"]["k"], a["success"]["n"]) for a in arms}


def test_csv_with_an_arm_column(tmp_path: Path) -> None:
    run = import_logs("table", [_csv(tmp_path / "r.csv")], tmp_path / "runs", options=MAPPING)
    # base passes the 6 even questions; cand adds q1 and q11 (i % 5 == 1): twice each.
    assert _success(run) == {"base": (12, 24), "cand": (16, 24)}
    pair = json.loads((run / "summary.json").read_text())["pairs"][0]
    assert (pair["a_only"], pair["b_only"]) == (0, 4)


def test_jsonl_and_parquet_give_the_same_trials(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    keys = ["question", "model", "repeat", "correct", "topic"]
    records = [dict(zip(keys, r, strict=True)) for r in ROWS]
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    parquet = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet)
    a = _success(import_logs("table", [jsonl], tmp_path / "j", options=MAPPING))
    b = _success(import_logs("table", [parquet], tmp_path / "p", options=MAPPING))
    assert a == b == {"base": (12, 24), "cand": (16, 24)}


def test_a_mapping_naming_a_missing_column_is_one_error(tmp_path: Path) -> None:
    path = _csv(tmp_path / "r.csv")
    with pytest.raises(ImportRefused) as err:
        import_logs("table", [path], tmp_path / "runs", options={**MAPPING, "outcome": "score"})
    message = str(err.value)
    assert message.startswith(f"{path}: the mapping names columns the file does not have")
    assert "outcome='score'" in message and "question, model, repeat, correct, topic" in message
    assert not (tmp_path / "runs").exists()


def test_one_file_without_an_arm_column_is_refused(tmp_path: Path) -> None:
    path = _csv(tmp_path / "r.csv")
    options = {k: v for k, v in MAPPING.items() if k != "arm"}
    with pytest.raises(ImportRefused, match=r"r\.csv: holds one arm only.*--option arm=COLUMN"):
        import_logs("table", [path], tmp_path / "runs", options=options)
    assert not (tmp_path / "runs").exists()


def test_mismatched_sample_ids_are_refused(tmp_path: Path) -> None:
    a = _csv(tmp_path / "a.csv", [(f"q{i}", "x", 0, 1, "t") for i in range(3)])
    b = _csv(tmp_path / "b.csv", [(f"z{i}", "x", 0, 1, "t") for i in range(3)])
    options = {"id": "question", "outcome": "correct"}
    with pytest.raises(ImportRefused, match=r"no sample is in every arm \(a: 3 samples, e\.g\."):
        import_logs("table", [a, b], tmp_path / "runs", options=options)
    assert not (tmp_path / "runs").exists()


def test_an_unknown_setting_names_the_accepted_keys(tmp_path: Path) -> None:
    with pytest.raises(ImportRefused, match=r"invalid settings \(colour: .*accepted keys: id, "):
        import_logs("table", [_csv(tmp_path / "r.csv")], tmp_path / "runs", options={"colour": "x"})


def test_a_non_binary_score_gets_a_paired_delta(tmp_path: Path) -> None:
    import numpy as np

    rows = [
        (f"q{i}", arm, r, round(0.1 * (i % 10) + (0.15 if arm == "cand" else 0.0), 3), "t")
        for arm in ("base", "cand")
        for i in range(10)
        for r in (0, 1)
    ]
    options = {**MAPPING, "pass_at": "0.5"}
    run = import_logs("table", [_csv(tmp_path / "s.csv", rows)], tmp_path / "runs", options=options)
    record = json.loads((run / "run.json").read_text())["imported"]
    (delta,) = record["score_deltas"]
    base = np.array([r[3] for r in rows if r[1] == "base"], dtype=float)
    cand = np.array([r[3] for r in rows if r[1] == "cand"], dtype=float)
    assert (delta["a"], delta["b"], delta["pairs"]) == ("base", "cand", 20)
    assert delta["estimate"] == pytest.approx(float(np.mean(base - cand)))
    assert delta["low"] <= delta["estimate"] <= delta["high"]
    again = import_logs("table", [tmp_path / "s.csv"], tmp_path / "again", options=options)
    assert json.loads((again / "run.json").read_text())["imported"]["score_deltas"] == [delta]
    assert _success(run) == {"base": (10, 20), "cand": (12, 20)}
    assert "Score deltas: mean paired difference" in (run / "report.md").read_text()
