"""Exports of a real (simulated) run: CSV, JSONL and Parquet rows, the DataFrame, JUnit."""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import pairbench
from helpers.common import bare_result
from helpers.export_runs import simulated_run
from pairbench._errors import ExportError, RunDirError
from pairbench.report.render._junit import junit_xml
from pairbench.store._export import FORMATS, export_bytes, load_frame, write_export
from pairbench.store._export_rows import FIXED, METRICS, export_table
from pairbench.store._records import Grade, Metric

pd: Any = importlib.import_module("pandas")  # no type stubs: typed as Any, like load_frame's


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated_run(tmp_path_factory.mktemp("export"))


def _summary(run: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    return summary


def _outcome_counts(frame: Any) -> dict[tuple[str, str], int]:
    sizes = frame.groupby(["arm", "outcome"]).size()
    return {(str(arm), str(outcome)): int(n) for (arm, outcome), n in sizes.items()}


def _summary_counts(run: Path) -> dict[tuple[str, str], int]:
    return {
        (entry["arm"], outcome): n
        for entry in _summary(run)["arms"]
        for outcome, n in entry["outcomes"].items()
        if n
    }


def _files(run: Path) -> dict[str, str]:
    return {
        p.relative_to(run).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run.rglob("*"))
        if p.is_file()
    }


def test_one_row_per_attempt_with_infra_attempts_kept(run: Path) -> None:
    loaded = pairbench.load_run(run)
    attempts = len(loaded.results) + len(loaded.infra) + len(loaded.interrupted)
    lines = export_bytes(run, "jsonl").decode("utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == attempts
    infra = [r for r in rows if r["outcome"] == "infra"]
    assert len(infra) == len(loaded.infra) >= 2
    assert all(not r["final"] and r["attempt"] >= 1 for r in infra)
    first = [r for r in infra if (r["arm"], r["task"], r["trial"]) == ("candidate", "task-2", 0)]
    assert [r["attempt"] for r in first] == [1, 2]  # kept, then its retry, both kept
    assert all(r["final"] for r in rows if r["outcome"] != "infra")
    not_run = [r for r in rows if r["outcome"] == "not_run"]
    assert not_run and all(r["attempt"] == 0 for r in not_run)
    assert all(set(r) == set(rows[0]) for r in rows)  # every column in every row
    assert rows[0]["label.tier"] == 1 and rows[0]["run_id"] == run.name


def test_csv_and_parquet_read_back_give_the_summary_counts(run: Path) -> None:
    from_csv = pd.read_csv(io.BytesIO(export_bytes(run, "csv")))
    from_parquet = pd.read_parquet(io.BytesIO(export_bytes(run, "parquet")))
    expected = _summary_counts(run)
    assert _outcome_counts(from_csv) == expected
    assert _outcome_counts(from_parquet) == expected
    assert list(from_csv.columns) == list(from_parquet.columns)
    assert from_csv["final"].dtype == bool and from_parquet["trial"].dtype == "int64"


def test_a_missing_metric_is_null_with_its_reason_never_zero(run: Path) -> None:
    frame = pd.read_parquet(io.BytesIO(export_bytes(run, "parquet")))
    ran = frame[frame["outcome"].isin(["passed", "failed"])]
    # The simulated agent draws a total input but no cache split: missing, with why.
    assert ran["cache_read_input_tokens"].isna().all()
    assert set(ran["cache_read_input_tokens_provenance"]) == {"missing"}
    assert set(ran["cache_read_input_tokens_reason"]) == {"no cache split simulated"}
    assert ran["cache_read_input_tokens_source"].isna().all()
    # Nothing ran: no metrics at all, so every metric is missing, and counts are null.
    not_run = frame[frame["outcome"] == "not_run"]
    assert not_run["wall_ms"].isna().all() and not_run["tool_calls"].isna().all()
    assert all("recorded no metrics" in why for why in not_run["wall_ms_reason"])
    text = pd.read_csv(io.BytesIO(export_bytes(run, "csv")))
    assert text["cache_read_input_tokens"].isna().all()
    assert (text["cache_read_input_tokens"] != 0).all()
    for line in export_bytes(run, "jsonl").splitlines():
        assert json.loads(line)["cache_read_input_tokens"] is None


def test_measured_and_estimated_values_name_their_source(run: Path) -> None:
    frame = load_frame(run)
    ran = frame[frame["outcome"] == "passed"]
    assert set(ran["agent_ms_provenance"]) == {"measured"}
    assert set(ran["agent_ms_source"]) == {"simulated agent (seeded)"}
    assert ran["agent_ms_reason"].isna().all()
    assert set(ran["cost_usd_provenance"]) == {"estimated"}  # the simulated agent's estimate
    assert all(s.startswith("simulated tokens x declared") for s in ran["cost_usd_source"])
    assert (ran["total_tokens"] == ran["input_tokens"] + ran["output_tokens"]).all()


def test_load_frame_is_the_same_rows_with_nullable_dtypes(run: Path) -> None:
    frame = pairbench.load_frame(run)
    table = export_table(run)
    assert list(frame.columns) == list(table.columns) and len(frame) == len(table.rows)
    assert _outcome_counts(frame) == _summary_counts(run)
    assert str(frame["trial"].dtype) == "Int64" and str(frame["wall_ms"].dtype) == "Float64"
    assert str(frame["final"].dtype) == "boolean" and str(frame["arm"].dtype) == "string"
    assert frame["cache_read_input_tokens"].isna().all()


def test_an_export_is_the_same_bytes_twice_and_writes_nothing_into_the_run(run: Path) -> None:
    before = _files(run)
    for fmt in FORMATS:
        assert export_bytes(run, fmt) == export_bytes(run, fmt), fmt
    load_frame(run)
    assert _files(run) == before


def test_columns_are_documented_and_every_metric_has_its_provenance(run: Path) -> None:
    table = export_table(run)
    for metric in METRICS:
        for part in ("", "_provenance", "_source", "_reason"):
            assert f"{metric}{part}" in table.columns
    own = [c for c in table.columns if c not in FIXED]
    assert own == ["label.tier"]  # exact-answer has no details: no grade.* column


def test_grade_details_flatten_and_a_non_finite_value_is_missing() -> None:
    from pairbench.store._export_rows import _kind, _metric_cells, _row

    result = bare_result(
        grade=Grade(
            outcome="failed",
            reason="12 of 13",
            details={"correct": 12, "score": {"name": 1.0}, "fields": [{"f": 1}], "empty": {}},
        ),
    )
    row = _row(result, True)
    assert row["grade.correct"] == 12 and row["grade.score.name"] == 1.0
    assert row["grade.fields"] == '[{"f": 1}]' and row["grade.empty"] == "{}"
    assert row["wall_ms"] is None and row["wall_ms_provenance"] == "missing"
    assert _kind([1, 2.5, None]) == "float" and _kind([True, None]) == "bool"
    assert _kind([1, "x"]) == "str" and _kind([None]) == "str"
    nan = _metric_cells("wall_ms", Metric.measured(float("nan"), "clock"))
    assert nan["wall_ms"] is None and nan["wall_ms_provenance"] == "missing"
    assert nan["wall_ms_reason"] == "a non-finite value (nan) was recorded by clock"


def test_junit_has_one_testcase_per_hypothesis_and_fails_the_unmet_one(run: Path) -> None:
    root = ET.fromstring(junit_xml(run))  # well-formed, or this raises
    assert root.tag == "testsuites"
    (suite,) = root
    assert suite.tag == "testsuite" and suite.get("tests") == "3"
    assert (suite.get("failures"), suite.get("errors")) == ("1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["h1-latency", "h2-tokens", "h3-tier-2"]
    verdicts = {h["id"]: h for h in _summary(run)["hypotheses"]}
    assert verdicts["h1-latency"]["verdict"] == "differs"
    assert cases["h1-latency"].find("failure") is None
    assert cases["h1-latency"].find("error") is None
    failure = cases["h2-tokens"].find("failure")
    assert failure is not None and failure.get("type") == "not shown equivalent"
    h2 = verdicts["h2-tokens"]
    message = failure.get("message") or ""
    lo, hi = h2["mean"]["ci95"]
    assert f"95% CI [{lo:.6g}, {hi:.6g}] not inside ±{h2['margin']['value']:.6g} tokens" in message
    assert f"{h2['n']} of {h2['pairs']} pairs used" in message
    error = cases["h3-tier-2"].find("error")
    assert error is not None and error.get("type") == "not computed"
    assert verdicts["h3-tier-2"]["reason"] in (error.get("message") or "")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["run_id"] == run.name and props["simulated"] == "true"


def test_junit_refuses_a_run_without_a_decision_rule(tmp_path: Path) -> None:
    bare = simulated_run(tmp_path, hypotheses=False, report=False)
    with pytest.raises(ExportError, match="no declared comparison has a decision rule") as info:
        junit_xml(bare)
    assert "hypotheses:" in str(info.value) and "start a new run" in str(info.value)


def test_junit_refuses_a_missing_or_stale_summary(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    summary = _summary(copy)
    summary["run"]["journal_head"] = "0" * 64
    (copy / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    with pytest.raises(ExportError, match=r"its verdicts are stale\. Fix: run `pairbench report"):
        junit_xml(copy)
    (copy / "summary.json").unlink()
    with pytest.raises(ExportError, match=r"no summary\.json, .* Fix: run `pairbench report"):
        junit_xml(copy)


def test_write_export_never_overwrites_without_force(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "trials.csv"
    write_export(b"first", out, run=run)
    with pytest.raises(ExportError, match=r"already exists\. Fix: pass --force"):
        write_export(b"second", out, run=run)
    assert out.read_bytes() == b"first"
    write_export(b"second", out, run=run, force=True)
    assert out.read_bytes() == b"second"
    with pytest.raises(ExportError, match="inside the run's results/ folder"):
        write_export(b"x", run / "results" / "trials.csv", run=run)


def test_a_folder_that_is_not_a_run_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match=r"not a pairbench run directory \(no run.json\)"):
        export_table(tmp_path)
    (tmp_path / "run.json").write_text("[]", encoding="utf-8")
    with pytest.raises(RunDirError, match=r"run.json: not a pairbench run.json"):
        load_frame(tmp_path)


def test_missing_pandas_or_pyarrow_says_how_to_install_them(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ExportError, match=r"pip install 'pairbench\[frame\]'"):
        load_frame(run)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ExportError, match=r"Parquet export needs pyarrow.*pairbench\[frame\]"):
        export_bytes(run, "parquet")
