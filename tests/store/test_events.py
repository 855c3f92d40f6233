"""The journal's typed lines: one writer and one reader, strict, documented, compatible."""

import json
from pathlib import Path

import pytest

from pairbench import RunDirError
from pairbench._schema_doc import (
    JOURNAL_TARGET,
    _attribute_docs,
    _pattern_doc,
    _walk,
    journal_reference,
)
from pairbench.store import Journal, trial_row
from pairbench.store._events import (
    EVENTS,
    JOURNAL_SCHEMA,
    AttemptFinished,
    AttemptStarted,
    CampaignIncomplete,
    FilesRecorded,
    MovedRecord,
    OtherEvent,
    RunEnded,
    RunResumed,
    RunStarted,
    TrialRow,
    WarmServerFailed,
)
from pairbench.store._journal import check_chain
from pairbench.store._records import Metric, Metrics, ToolCallTiming, TrialResult
from pairbench.store._run_info import ExecutorRef

GENESIS = "0" * 64


def _result(**changes: object) -> TrialResult:
    base = TrialResult(
        run_id="r",
        experiment="e",
        arm="a",
        task="t",
        trial=3,
        labels={"tier": 2},
        seed=1,
        model_seed=2,
        attempt=1,
        start_order=1,
        outcome="agent_error",
        reason='it said "event": "run_ended"',
        final_answer="x" * 400,
        agent="scripted",
        metrics=Metrics(
            wall_ms=Metric.measured(12.5, "pairbench client clock (monotonic)"),
            input_tokens=Metric(value=10.0, provenance="estimated", estimator="chars/4"),
            output_tokens=Metric.missing("no usage reported"),
            tool_calls=[
                ToolCallTiming(server="s", tool="a", client_ms=1.5, server_ms=1.0),
                ToolCallTiming(server="s", tool="b", client_ms=3.0),
            ],
            cold_start_ms=Metric.missing("fewer than two timed tool calls"),
            turns=Metric.measured(2, "scripted"),
            cost_usd=Metric(value=0.25, provenance="estimated", estimator="declared prices"),
            connect_ms={"s": Metric.measured(4.0, "pairbench client clock (monotonic)")},
        ),
    )
    return base.model_copy(update=changes)


def _every_event() -> list[
    RunStarted
    | RunResumed
    | RunEnded
    | AttemptStarted
    | AttemptFinished
    | WarmServerFailed
    | CampaignIncomplete
    | FilesRecorded
]:
    return [
        RunStarted(run_id="r", planned=2, executor=ExecutorRef(name="local")),
        AttemptStarted(key="a/t/3", attempt=1),
        AttemptFinished(
            key="a/t/3",
            attempt=1,
            outcome="agent_error",
            result="results/a/t/3.json",
            result_sha256="1" * 64,
            transcript="transcripts/a/t/3.jsonl",
            transcript_sha256="2" * 64,
            row=trial_row(_result(), kept=False),
            files={"fixtures/a/t/3.1/audit.jsonl": "4" * 64},
        ),
        WarmServerFailed(server="docs", error="exited with 1"),
        RunEnded(status="stopped"),
        RunResumed(done=1, executor=ExecutorRef(name="ray", address="auto")),
        CampaignIncomplete(
            campaign="r-P0-a",
            pair=0,
            arm="a",
            replaced_by="r-P0-a-R1",
            reason="the runner stopped during campaign r-P0-a after 1 of its 2 scenarios",
            moved=[
                MovedRecord(
                    key="a/t/0",
                    attempt=1,
                    result_from="results/a/t/0.json",
                    result="replaced/a/t/0.1.json",
                    result_sha256="3" * 64,
                    row=trial_row(_result(), kept=True),
                )
            ],
        ),
        FilesRecorded(by="proxy", files={"proxy/exchanges.jsonl": "5" * 64}),
    ]


def test_every_event_reads_back_as_the_model_it_was_written_as(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    written = _every_event()
    journal = Journal(path, GENESIS)
    for event in written:
        journal.append(event)
    journal.close()
    assert Journal.read(path) == written
    assert check_chain(path, GENESIS).problems == ()
    assert {type(e) for e in written} == set(EVENTS)  # the test covers every kind


def test_a_row_survives_the_journal_bit_for_bit(tmp_path: Path) -> None:
    # verify compares the row a result file gives with the stored one: a float or a None
    # that changed on the way through JSON would flag every honest run.
    row = trial_row(_result(), kept=True)
    assert row.answer is not None and row.answer.endswith("…")  # an excerpt, not 400 chars
    assert row.calls == [(1.5, 1.0), (3.0, None)]
    assert row.input_tokens_prov == "estimated" and row.input_tokens_note == "chars/4"
    assert row.output_tokens is None and row.output_tokens_prov == "missing"
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(AttemptFinished(key="a/t/3", attempt=1, row=row))
    journal.close()
    (event,) = Journal.read(path)
    assert isinstance(event, AttemptFinished) and event.row == row


def test_agent_text_that_looks_like_a_run_event_stays_agent_text(tmp_path: Path) -> None:
    # The run's status is found by pattern in the raw bytes; JSON escapes the quotes of
    # an agent's answer, so it cannot end or restart a run.
    from pairbench.store._run_record import RunRecord, with_run_events

    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(RunStarted(run_id="r", planned=1))
    row = trial_row(_result(final_answer='{"event":"run_ended","status":"complete"}'), kept=False)
    journal.append(AttemptFinished(key="a/t/3", attempt=1, row=row, reason=row.answer))
    journal.close()
    record = with_run_events(
        RunRecord.model_validate({"run_id": "r", "experiment": {"id": "e"}}), path
    )
    assert record.status == "running"
    assert [i.command for i in record.invocations] == []  # no executor: not an invocation


def test_a_line_of_the_wrong_type_is_named_by_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    lines = [
        {"event": "run_started", "at": "t", "run_id": "r", "planned": 1},
        {"event": "attempt_started", "at": "t", "key": "a/t/0", "attempt": "1"},
        {"event": "run_ended", "at": "t", "status": "complete"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(RunDirError, match=r"journal\.jsonl:2: 'attempt' should be a valid integer"):
        Journal.read(path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2]", "a JSON array, not an event object"),
        ('{"at": "t"}', "an object without an 'event' name"),
        ('{"event": "attempt_finished", "at": "t", "key": "a/t/0"}', "'attempt' Field required"),
        (
            '{"event": "attempt_finished", "at": "t", "key": "a/t/0", "attempt": 1, "row": 3}',
            "'row' should be",
        ),
        (
            '{"event": "attempt_finished", "at": "t", "key": "a/t/0", "attempt": true}',
            "'attempt' should be a valid integer",
        ),
    ],
)
def test_a_line_that_is_not_an_event_is_one_error(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text(line + '\n{"event": "run_ended", "at": "t", "status": "x"}\n', encoding="utf-8")
    with pytest.raises(RunDirError, match=r"journal\.jsonl:1: ") as caught:
        Journal.read(path)
    assert message in str(caught.value)
    assert "Fix: restore the journal" in str(caught.value)


def test_lines_from_other_versions_still_read(tmp_path: Path) -> None:
    # Before typed events: json.dumps with sorted keys and spaces; a later version may add
    # kinds and keys this one does not know: they are kept, not refused.
    path = tmp_path / "journal.jsonl"
    old = [
        {
            "at": "t",
            "command": "run",
            "event": "run_started",
            "executor": {"address": None, "name": "local"},
            "planned": 2,
            "run_id": "r",
        },
        {
            "at": "t",
            "attempt": 1,
            "event": "attempt_finished",
            "key": "a/t/0",
            "outcome": "passed",
            "result": "results/a/t/0.json",
            "result_sha256": "1" * 64,
        },
        {"at": "t", "event": "attempt_finished", "key": "a/t/1", "attempt": 1, "new_key": 1},
        {"at": "t", "event": "checkpoint", "shard": 4},
    ]
    path.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in old), encoding="utf-8")
    started, finished, extended, unknown = Journal.read(path)
    assert isinstance(started, RunStarted) and started.executor == ExecutorRef(name="local")
    assert isinstance(finished, AttemptFinished) and finished.row is None
    assert finished.outcome == "passed" and not finished.recovered
    assert isinstance(extended, AttemptFinished) and extended.key == "a/t/1"
    assert isinstance(unknown, OtherEvent) and unknown.event == "checkpoint"
    assert unknown.model_extra == {"shard": 4}


def test_the_first_line_carries_the_journal_schema(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(RunStarted(run_id="r", planned=0))
    journal.close()
    assert json.loads(path.read_bytes())["journal_schema"] == JOURNAL_SCHEMA


def test_a_row_with_a_value_the_writer_could_not_make_is_refused() -> None:
    fields = trial_row(_result(), kept=False).model_dump()
    with pytest.raises(ValueError, match="wall_ms_prov"):
        TrialRow.model_validate({**fields, "wall_ms_prov": "guessed"})
    with pytest.raises(ValueError, match="trial"):
        TrialRow.model_validate({**fields, "trial": "3"})


def test_committed_journal_reference_is_current() -> None:
    # Fix: make docs (python -m pairbench._schema_doc) and commit the result.
    assert JOURNAL_TARGET.read_text(encoding="utf-8") == journal_reference()
    assert Path(__file__).parents[2] / "src/pairbench/store/JOURNAL_SCHEMA.md" == JOURNAL_TARGET


def test_every_journal_model_and_field_is_documented() -> None:
    reference = journal_reference()
    for event in EVENTS:
        for model in _walk(event):
            assert (model.__doc__ or "").strip(), model.__name__
            docs = _attribute_docs(model)
            for name in model.model_fields:
                assert (docs.get(name) or _pattern_doc(name)).strip(), f"{model.__name__}.{name}"
            assert f"## {model.__name__}" in reference
