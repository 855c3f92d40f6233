"""The trial table: rows from records, npz round trip, concat, and load_table's cache rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers.report_builders import make_result, make_run, make_scenario
from pairbench._errors import RunDirError
from pairbench.report.summary._build import build_summary, summarize
from pairbench.schedule._plan import TrialKey
from pairbench.store import Journal, RunDir, TrialTable, load_run, load_table, trial_row
from pairbench.store._events import AttemptFinished, TrialRow
from pairbench.store._records import (
    Metric,
    Metrics,
    ModelRequest,
    Security,
    ToolCallTiming,
    TrialResult,
    usage_metrics,
)


def _same(a: TrialTable, b: TrialTable) -> None:
    assert set(a.columns) == set(b.columns)
    for name in a.columns:
        if name in a.categories:  # compare decoded strings: codes may differ
            assert a.strings(name) == b.strings(name), name
        else:
            np.testing.assert_array_equal(a.columns[name], b.columns[name], err_msg=name)
    for name in a.calls:
        if name == "tool":  # decoded too
            continue
        np.testing.assert_array_equal(a.calls[name], b.calls[name], err_msg=name)
    assert _call_tools(a) == _call_tools(b)


def _call_tools(table: TrialTable) -> list[str | None]:
    names = table.categories["call_tool"]
    return [None if c < 0 else names[c] for c in table.calls["tool"].tolist()]


def _as_stored(row: TrialRow) -> TrialRow:
    """``row`` written to JSON and read back, as the journal stores and reads it."""
    return TrialRow.model_validate_json(row.model_dump_json())


def test_row_keeps_provenance_and_never_writes_zero_for_missing() -> None:
    r = make_result(
        "a",
        "t",
        0,
        "agent_error",
        calls=(10.0, 30.0, 20.0),
        cost=Metric(value=0.5, provenance="estimated", estimator="list price v1"),
        final_answer="x" * 400,
        reason="model API 500",
    )
    row = trial_row(r, kept=False)
    assert row.tool_client_ms == 20.0  # the median of the timed calls
    assert row.cost_usd == 0.5 and row.cost_usd_prov == "estimated"
    assert row.cost_usd_note == "list price v1"
    assert row.input_tokens is None and row.input_tokens_prov == "missing"
    assert row.input_tokens_note == "scripted agent reports no usage"
    assert row.answer == "x" * 300 + "…"  # an excerpt, kept for the attention list
    assert row.calls == [(10.0, None), (30.0, None), (20.0, None)]
    passed = trial_row(make_result("a", "t", 1, final_answer="42"), kept=False)
    assert passed.answer is None  # only listed outcomes keep their answer
    bare = trial_row(make_result("a", "t", 2, "not_run", metrics=False), kept=True)
    assert bare.metrics is False and bare.wall_ms is None and bare.kept is True
    table = TrialTable.from_rows([row, bare])
    assert np.isnan(table.columns["input_tokens"]).all()  # missing is NaN, not 0


def test_npz_round_trip_and_json_rows_give_the_same_table(tmp_path: Path) -> None:
    results, infra = make_scenario()
    table = TrialTable.from_results(results, infra)
    # The journal stores rows as JSON: a table from parsed rows is the same table.
    rows = [_as_stored(trial_row(r, kept=False)) for r in results]
    rows += [_as_stored(trial_row(r, kept=True)) for r in infra]
    _same(table, TrialTable.from_rows(rows))
    path = tmp_path / "trials.npz"
    path.write_bytes(table.to_bytes({"journal_bytes": 7}))
    with np.load(path, allow_pickle=False) as data:
        back, meta = TrialTable.from_npz(data)
    assert meta["journal_bytes"] == 7
    _same(table, back)
    assert len(back) == len(results) + len(infra)
    assert len(back.calls["row"]) == sum(len(r.metrics.tool_calls) for r in results if r.metrics)


def test_concat_merges_categories_and_offsets_calls() -> None:
    results, _ = make_scenario()
    head, tail = results[:10], results[10:]
    whole = TrialTable.from_results(results)
    joined = TrialTable.from_results(head).concat(TrialTable.from_results(tail))
    _same(whole, joined)


def _summary_equal(
    run: dict[str, Any], results: list[TrialResult], infra: list[TrialResult]
) -> None:
    table = TrialTable.from_results(results, infra)
    assert summarize(run, table) == build_summary(run, results, infra)


def _stored_run(tmp_path: Path, *, rows: bool) -> tuple[Path, list[TrialResult]]:
    """A run directory written the way the runner writes one: results, then journal lines."""
    run_dir = RunDir.create(tmp_path, "run-1")
    results, _ = make_scenario()
    info = make_run()
    info["schedule"] = {
        "experiment": "mcp-transports",
        "run_seed": 1,
        "order_policy": "alternate",
        "pairs": [
            {"index": 0, "task": t, "trial": i, "seed": 1, "model_seed": 1, "order": info["arms"]}
            for t, i in sorted({(r.task, r.trial) for r in results})
        ],
    }
    run_dir.run_json.write_bytes(RunDir.encode_run_json(info))
    journal = run_dir.journal()
    stored = [r for r in results if r.outcome != "not_run"]
    for r in stored:
        key = TrialKey(arm=r.arm, task=r.task, trial=r.trial)
        sha = run_dir.write_result(key, r)
        row = trial_row(r, kept=False) if rows else None
        journal.append(
            AttemptFinished(key=key.label, attempt=1, result="x", result_sha256=sha, row=row)
        )
    journal.close()
    return run_dir.path, stored


def test_load_table_builds_from_the_journal_then_reuses_the_cache(tmp_path: Path) -> None:
    path, stored = _stored_run(tmp_path, rows=True)
    first = load_table(path)
    assert first.source == "journal" and (path / "trials.npz").is_file()
    second = load_table(path)
    assert second.source == "trials.npz"
    _same(first.table, second.table)
    # The planned trial with no result comes back as not_run, as load_run reports it.
    not_run = first.table.is_value("outcome", "not_run")
    assert not_run.sum() == 1 and len(first.table) == len(stored) + 1
    reason = first.table.strings("reason")[int(np.flatnonzero(not_run)[0])]
    assert reason == "no result: run complete"


def test_a_grown_journal_or_a_damaged_cache_is_rebuilt(tmp_path: Path) -> None:
    path, _ = _stored_run(tmp_path, rows=True)
    load_table(path)
    journal = Journal(path / "journal.jsonl")
    extra = make_result("remote-http", "close-issue", 3, "infra", metrics=False)
    journal.append(
        AttemptFinished(key="x", attempt=1, result="infra/x", row=trial_row(extra, kept=True))
    )
    journal.close()
    grown = load_table(path)
    assert grown.source == "journal" and int(grown.table.columns["kept"].sum()) == 1
    cache = path / "trials.npz"
    for damaged in (b"not an npz file", cache.read_bytes()[: cache.stat().st_size // 2]):
        cache.write_bytes(damaged)
        assert load_table(path).source == "journal"  # rebuilt, never trusted
        assert load_table(path).source == "trials.npz"


def test_the_report_reads_the_same_numbers_from_the_journal_as_from_result_files(
    tmp_path: Path,
) -> None:
    # Two sources of the same records: journal rows (JSON, journal order) and the result
    # files (pydantic, path order), plus not_run for the planned trial without a result.
    path, _ = _stored_run(tmp_path, rows=True)
    loaded = load_table(path)
    assert loaded.source == "journal"
    run = load_run(path)
    by_files = build_summary(run.info, run.results, [*run.infra, *run.interrupted])
    assert summarize(loaded.info, loaded.table) == by_files
    assert by_files["not_run"] == 1 and by_files["trials"] == 35


def test_runs_without_rows_are_read_from_result_files(tmp_path: Path) -> None:
    path, stored = _stored_run(tmp_path, rows=False)
    loaded = load_table(path)
    assert loaded.source == "result files"
    assert int((~loaded.table.columns["kept"]).sum()) == len(stored) + 1


def test_a_non_finite_metric_is_missing_with_its_reason_not_a_crash() -> None:
    nan = make_result(
        "a",
        "t",
        0,
        tokens=Metric.measured(float("nan"), "provider usage"),
        calls=(float("inf"), 20.0),
    )
    row = trial_row(nan, kept=False)
    assert row.input_tokens is None and row.input_tokens_prov == "missing"
    assert row.input_tokens_note == "a non-finite value (nan) was recorded by provider usage"
    assert row.tool_client_ms == 20.0 and row.calls[0] == (None, None)
    other = make_result("b", "t", 0, tokens=Metric.measured(900.0, "provider usage"))
    summary = build_summary(make_run(arms=["a", "b"]), [nan, other], [])
    reasons = summary["cost"][0]["input_tokens"]["missing"]["reasons"]
    assert reasons == {"a non-finite value (nan) was recorded by provider usage": 1}


def test_a_record_with_a_negative_trial_index_is_refused() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        make_result("a", "t", -1)


def test_load_table_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="not a pairbench run directory"):
        load_table(tmp_path)


SPLIT = ("uncached_input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
NEW_COLUMNS = (*SPLIT, "total_tokens")
PREDATES = "not recorded: the record predates this metric"


def _with_usage() -> list[TrialResult]:
    usage = usage_metrics(
        source="provider usage", uncached=12, cache_creation=300, cache_read=4000, output=55
    )
    return [
        make_result("a", "t", 0, usage=usage, models=("model-x",)),
        make_result("a", "t", 1),  # no usage reported: missing, never 0
    ]


def test_usage_split_and_models_round_trip_through_the_row_and_trials_npz(
    tmp_path: Path,
) -> None:
    results = _with_usage()
    row = _as_stored(trial_row(results[0], kept=False))  # as the journal stores it
    assert (row.input_tokens, row.total_tokens) == (4312.0, 4367.0)
    assert [getattr(row, n) for n in SPLIT] == [12.0, 300.0, 4000.0]
    assert row.cache_read_input_tokens_prov == "measured"
    assert row.cache_read_input_tokens_note == "provider usage"
    assert row.models is not None and json.loads(row.models) == ["model-x"]
    bare = trial_row(results[1], kept=False)
    assert all(getattr(bare, n) is None for n in NEW_COLUMNS) and bare.models is None
    table = TrialTable.from_rows([row, _as_stored(bare)])
    path = tmp_path / "trials.npz"
    path.write_bytes(table.to_bytes({}))
    with np.load(path, allow_pickle=False) as data:
        back, _ = TrialTable.from_npz(data)
    _same(table, back)
    for name in NEW_COLUMNS:
        assert not np.isnan(back.columns[name][0]), name
        assert np.isnan(back.columns[name][1]), name  # missing is NaN, never 0
    assert back.strings("models") == ['["model-x"]', None]
    assert back.strings("total_tokens_prov") == ["measured", "missing"]


def test_a_trials_npz_from_before_the_new_columns_loads_them_as_missing(tmp_path: Path) -> None:
    path, _ = _stored_run(tmp_path, rows=True)
    load_table(path)
    # Rewrite the cache as an older pairbench wrote it: no usage split, total or models.
    cache = path / "trials.npz"
    gone = {"models", *NEW_COLUMNS, *(f"{n}_{p}" for n in NEW_COLUMNS for p in ("prov", "note"))}
    with np.load(cache, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if k.removeprefix("col.") not in gone}
        meta = json.loads(bytes(data["meta"]).decode("utf-8"))
    meta["categories"] = {k: v for k, v in meta["categories"].items() if k not in gone}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
    np.savez(cache, **arrays)
    old = load_table(path)
    assert old.source == "trials.npz"  # the journal has not grown: the old cache is used
    for name in NEW_COLUMNS:
        assert np.isnan(old.table.columns[name]).all(), name
        assert (old.table.columns[f"{name}_prov"] == -1).all()
    assert (old.table.columns["models"] == -1).all()
    summary = summarize(old.info, old.table)
    cost = summary["cost"][1]["total_tokens"]  # local-stdio: every trial had metrics
    assert cost["measured"]["n"] == 0 and cost["measured"]["median"] is None
    assert cost["missing"]["reasons"] == {PREDATES: cost["missing"]["n"]}
    assert all(a["models_seen"] == [] for a in summary["run"]["arm_identities"])


def test_journal_rows_from_before_the_new_columns_load_them_as_missing(tmp_path: Path) -> None:
    rows = []
    for result in _with_usage():
        # The row as an older pairbench wrote it into the journal: without those columns.
        old = json.loads(trial_row(result, kept=False).model_dump_json())
        old.pop("models")
        for name in NEW_COLUMNS:
            for key in (name, f"{name}_prov", f"{name}_note"):
                old.pop(key)
        rows.append(TrialRow.model_validate_json(json.dumps(old)))
    table = TrialTable.from_rows(rows)
    for name in NEW_COLUMNS:
        assert np.isnan(table.columns[name]).all()
    assert table.columns["input_tokens"][0] == 4312.0  # the columns it had are kept


def _per_tool(trial: int, *calls: tuple[str | None, str, float]) -> TrialResult:
    """A trial whose calls are ``(server, tool, client_ms)``, with per-tool cold starts."""
    r = make_result("a", "t", trial)
    assert r.metrics is not None
    timings = [ToolCallTiming(server=sv, tool=tool, client_ms=ms) for sv, tool, ms in calls]
    keys = [Metrics.tool_key(c) for c in timings]
    cold = {k: Metric.measured(float(len(k)), "clock") for k in keys}
    cold["s.once"] = Metric.missing("fewer than two timed calls of s.once")
    update = {"tool_calls": timings, "cold_start_ms_by_tool": dict(sorted(cold.items()))}
    return r.model_copy(update={"metrics": r.metrics.model_copy(update=update)})


def test_tools_and_their_cold_starts_ride_on_the_calls() -> None:
    one = _per_tool(
        0, ("s", "get", 5.0), (None, "Read", 1.0), ("s", "get", 3.0), ("s", "once", 2.0)
    )
    row = _as_stored(trial_row(one, kept=False))
    assert row.call_tools == ["s.get", "Read", "s.get", "s.once"]
    assert row.tool_cold_starts == [("Read", 4.0), ("s.get", 5.0), ("s.once", None)]
    two = _per_tool(1, ("d", "get", 9.0), ("s", "get", 7.0))
    table = TrialTable.from_rows([row, trial_row(two, kept=False)])
    assert _call_tools(table) == ["s.get", "Read", "s.get", "s.once", "d.get", "s.get"]
    # A tool's cold start sits on its first call in the trial; NaN elsewhere and when missing.
    cold = table.calls["cold_start_ms"].tolist()
    assert cold[:2] == [5.0, 4.0] and cold[4:] == [5.0, 5.0]
    assert np.isnan(cold[2]) and np.isnan(cold[3])
    # Joined from parts whose tools are coded in other orders, the names stay the same.
    joined = TrialTable.from_results([one]).concat(TrialTable.from_results([two]))
    assert joined.categories["call_tool"] == ["s.get", "Read", "s.once", "d.get"]
    _same(table, joined)
    reverse = TrialTable.from_results([two]).concat(TrialTable.from_results([one]))
    assert _call_tools(reverse) == ["d.get", "s.get", "s.get", "Read", "s.get", "s.once"]
    # The token verdict is a tri-state column: 1, 0, or -1 for a record without the detector.
    found = one.model_copy(update={"security": Security(token_shaped_in_output=True)})
    tokens = TrialTable.from_results([found, two]).columns["token"].tolist()
    assert tokens == [1, -1]


def test_a_record_from_before_per_tool_metrics_gives_no_tool_names() -> None:
    r = make_result("a", "t", 0)  # calls, but no per-tool metrics
    assert r.metrics is not None
    older = r.model_copy(
        update={"metrics": r.metrics.model_copy(update={"cold_start_ms_by_tool": {}})}
    )
    row = trial_row(older, kept=False)
    # As an older pairbench wrote it into the journal: ``verify`` rebuilds the same row.
    assert row.call_tools == [] and row.tool_cold_starts == [] and len(row.calls) == 2
    table = TrialTable.from_rows([row])
    assert _call_tools(table) == [None, None] and np.isnan(table.calls["cold_start_ms"]).all()


def test_a_trials_npz_from_before_per_tool_calls_loads_them_as_absent(tmp_path: Path) -> None:
    table = TrialTable.from_results([_per_tool(0, ("s", "get", 5.0), ("s", "get", 3.0))])
    cache = tmp_path / "trials.npz"
    cache.write_bytes(table.to_bytes({}))
    with np.load(cache, allow_pickle=False) as data:
        gone = {"call.tool", "call.cold_start_ms", "col.token"}
        arrays = {k: data[k] for k in data.files if k not in gone}
        meta = json.loads(bytes(data["meta"]).decode("utf-8"))
    meta["categories"].pop("call_tool")
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
    np.savez(cache, **arrays)
    with np.load(cache, allow_pickle=False) as data:
        old, _ = TrialTable.from_npz(data)
    assert _call_tools(old) == [None, None] and np.isnan(old.calls["cold_start_ms"]).all()
    assert old.columns["token"].tolist() == [-1]
    np.testing.assert_array_equal(old.calls["client_ms"], [5.0, 3.0])


def _with_requests(trial: int, *prompts: int) -> TrialResult:
    r = make_result("remote-http", "read-title", trial)
    assert r.metrics is not None
    requests = [
        ModelRequest(turn=i + 1, prompt_tokens=p, latency_ms=10.0 * p,
                     body_sha256=f"{p:016x}" + "0" * 48, reply_sha256="f" * 64)
        for i, p in enumerate(prompts)
    ]  # fmt: skip
    return r.model_copy(
        update={"metrics": r.metrics.model_copy(update={"model_requests": requests})}
    )


def test_model_requests_ride_on_the_table_through_rows_npz_and_concat(tmp_path: Path) -> None:
    results = [_with_requests(0, 5, 7), make_result("remote-http", "read-title", 1)]
    results.append(_with_requests(2, 9))
    table = TrialTable.from_rows(_as_stored(trial_row(r, kept=False)) for r in results)
    req = table.requests
    assert req["row"].tolist() == [0, 0, 2]
    assert req["prompt_tokens"].tolist() == [5.0, 7.0, 9.0]
    assert np.isnan(req["first_token_ms"]).all()  # not streamed: not recorded, never 0
    # The digest's first 64 bits, as a signed int64 (ffff... is -1).
    assert req["body"].tolist() == [5, 7, 9] and req["reply"].tolist() == [-1, -1, -1]
    cache = tmp_path / "trials.npz"
    cache.write_bytes(table.to_bytes({}))
    with np.load(cache, allow_pickle=False) as data:
        back, _ = TrialTable.from_npz(data)
    joined = TrialTable.from_results(results[:1]).concat(TrialTable.from_results(results[1:]))
    for other in (back, joined):
        for name, column in req.items():
            np.testing.assert_array_equal(column, other.requests[name], err_msg=name)


def test_a_trials_npz_from_before_model_requests_loads_none(tmp_path: Path) -> None:
    table = TrialTable.from_results([_with_requests(0, 5)])
    cache = tmp_path / "trials.npz"
    cache.write_bytes(table.to_bytes({}))
    with np.load(cache, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if not k.startswith("req.")}
    np.savez(cache, **arrays)
    with np.load(cache, allow_pickle=False) as data:
        old, _ = TrialTable.from_npz(data)
    assert len(old) == 1 and len(old.requests["row"]) == 0
    # A damaged requests part is refused, not read past its rows.
    arrays["req.row"] = np.array([3], dtype=np.int64)
    arrays |= {f"req.{k}": v for k, v in table.requests.items() if k != "row"}
    np.savez(cache, **arrays)
    with np.load(cache, allow_pickle=False) as data, pytest.raises(ValueError, match="no row"):
        TrialTable.from_npz(data)
