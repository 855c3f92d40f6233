"""Resume after the runner died inside a group commit: between its renames and its line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from helpers.common import events_of, relink_journal
from pairbench import resume_run, start_run
from pairbench.freeze import verify_run
from pairbench.store import Journal, load_table, sha256_file
from pairbench.store._events import AttemptFinished, AttemptStarted


def _finished_run(root: Path) -> Path:
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    (root / "plan.yaml").write_text("steps: []\nwithout_tools: ok\n", encoding="utf-8")
    (root / "experiment.yaml").write_text(
        "id: recover\nversion: '1'\ntrials: 2\nbudget: {concurrency: 2}\n"
        "agent: {adapter: scripted}\narms: {a: {}, b: {}}\ntasks:\n"
        "  - {id: t0, prompt: p.md, plan: plan.yaml, "
        "grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    outcome = start_run(root / "experiment.yaml", root / "runs", run_seed=1)
    assert outcome.status == "complete"
    return outcome.run_dir


def _drop_finished_line(run_dir: Path, key: str) -> dict[str, object]:
    """Rewrite the journal as if the runner died before ``key``'s finished line."""
    path = run_dir / "journal.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    kept: list[bytes] = []
    dropped: dict[str, object] | None = None
    for raw in lines:
        event = json.loads(raw)
        if event["event"] == "attempt_finished" and event["key"] == key:
            dropped = event
            continue
        kept.append(raw)
    path.write_bytes(b"".join(kept))
    relink_journal(run_dir)
    assert dropped is not None
    return dropped


def test_a_linked_result_without_its_line_is_journaled_on_resume_not_rerun(
    tmp_path: Path,
) -> None:
    run_dir = _finished_run(tmp_path)
    lost = _drop_finished_line(run_dir, "a/t0/1")
    resumed = resume_run(run_dir)
    assert resumed.status == "complete"
    events = Journal.read(run_dir / "journal.jsonl")
    started = Counter(e.key for e in events_of(events, AttemptStarted))
    assert started["a/t0/1"] == 1  # not run again: the linked result is whole
    again = [e for e in events_of(events, AttemptFinished) if e.key == "a/t0/1"]
    assert len(again) == 1
    for field in ("result", "result_sha256", "transcript", "transcript_sha256", "outcome"):
        assert getattr(again[0], field) == lost[field]
    assert verify_run(run_dir) == []


def test_a_transcript_moved_without_its_result_stays_with_its_interrupted_attempt(
    tmp_path: Path,
) -> None:
    run_dir = _finished_run(tmp_path)
    lost = _drop_finished_line(run_dir, "b/t0/0")
    (run_dir / str(lost["result"])).unlink()  # died after the transcript's rename
    orphan = run_dir / str(lost["transcript"])
    orphan_sha = sha256_file(orphan)
    resumed = resume_run(run_dir)
    assert resumed.status == "complete"
    kept = run_dir / "interrupted" / "b" / "t0" / "0.1.jsonl"
    assert sha256_file(kept) == orphan_sha  # the first attempt's transcript, kept
    events = Journal.read(run_dir / "journal.jsonl")
    final = [e for e in events_of(events, AttemptFinished) if e.key == "b/t0/0" and e.attempt == 2]
    assert final and final[0].outcome == "passed"
    assert sha256_file(run_dir / str(final[0].transcript)) == final[0].transcript_sha256


def _as_placed_but_unjournaled(run_dir: Path, key: str, *, started: bool, **record: object) -> Path:
    """Turn ``key``'s committed result into another record placed by a commit that died
    before its journal line: the result file rewritten, its finished line dropped (and its
    started line unless ``started``: a not_run record has none)."""
    path = run_dir / "journal.jsonl"
    drop = {"attempt_finished"} | (set() if started else {"attempt_started"})
    kept, lost = [], None
    for raw in path.read_bytes().splitlines(keepends=True):
        event = json.loads(raw)
        if event.get("key") == key and event["event"] in drop:
            lost = event if event["event"] == "attempt_finished" else lost
            continue
        kept.append(raw)
    path.write_bytes(b"".join(kept))
    relink_journal(run_dir)
    assert lost is not None
    result = run_dir / str(lost["result"])
    data = json.loads(result.read_text(encoding="utf-8")) | record
    result.write_text(json.dumps(data), encoding="utf-8")
    (run_dir / str(lost["transcript"])).unlink()
    return result


def test_a_placed_not_run_record_is_journaled_with_its_reason(tmp_path: Path) -> None:
    # A budget stop's not_run has no started line; a crash before its finished line must
    # not leave it unjournaled (verify would fail forever, the report would lose its reason).
    run_dir = _finished_run(tmp_path)
    _as_placed_but_unjournaled(
        run_dir,
        "b/t0/1",
        started=False,
        outcome="not_run",
        attempt=0,
        reason="budget stop: over",
        grade=None,
    )
    assert resume_run(run_dir).status == "complete"
    assert verify_run(run_dir) == []
    table = load_table(run_dir).table
    arms, trials = table.strings("arm"), table.columns["trial"].tolist()
    rows = [
        i
        for i, (arm, trial) in enumerate(zip(arms, trials, strict=True))
        if (arm, trial) == ("b", 1)
    ]
    assert [table.strings("reason")[i] for i in rows] == ["budget stop: over"]


def test_a_placed_kept_infra_record_is_journaled_and_counts_as_infra(tmp_path: Path) -> None:
    run_dir = _finished_run(tmp_path)
    result = _as_placed_but_unjournaled(
        run_dir, "b/t0/0", started=True, outcome="infra", reason="fixture down", grade=None
    )
    kept = run_dir / "infra" / "b" / "t0" / "0.1.json"
    kept.parent.mkdir(parents=True)
    result.replace(kept)
    assert resume_run(run_dir).status == "complete"
    assert verify_run(run_dir) == []
    events = Journal.read(run_dir / "journal.jsonl")
    b0 = [e for e in events_of(events, AttemptFinished) if e.key == "b/t0/0"]
    assert [(e.attempt, e.outcome) for e in b0] == [(1, "infra"), (2, "passed")]
    loaded = load_table(run_dir)
    assert loaded.source == "journal" and int(loaded.table.columns["kept"].sum()) == 1


def test_temporary_files_a_crash_left_are_removed_on_resume(tmp_path: Path) -> None:
    run_dir = _finished_run(tmp_path)
    stray = run_dir / "results" / "a" / "t0" / ".0.json.1a2b3c4d.tmp"
    stray.write_text('{"half": ', encoding="utf-8")
    assert any(m.kind == "unjournaled" for m in verify_run(run_dir))
    assert resume_run(run_dir).status == "complete"
    assert not stray.exists() and verify_run(run_dir) == []
