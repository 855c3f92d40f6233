"""Resume after the runner died inside a group commit: between its renames and its line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pairbench import resume_run, start_run
from pairbench.freeze import verify_run
from pairbench.store import Journal, sha256_file


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
    kept, dropped = [], None
    for raw in lines:
        event = json.loads(raw)
        if event["event"] == "attempt_finished" and event["key"] == key:
            dropped = event
            continue
        kept.append(raw)
    path.write_bytes(b"".join(kept))
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
    started = Counter(e["key"] for e in events if e["event"] == "attempt_started")
    assert started["a/t0/1"] == 1  # not run again: the linked result is whole
    again = [e for e in events if e["event"] == "attempt_finished" and e["key"] == "a/t0/1"]
    assert len(again) == 1
    for field in ("result", "result_sha256", "transcript", "transcript_sha256", "outcome"):
        assert again[0][field] == lost[field]
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
    final = [
        e
        for e in events
        if e["event"] == "attempt_finished" and e["key"] == "b/t0/0" and e["attempt"] == 2
    ]
    assert final and final[0]["outcome"] == "passed"
    assert sha256_file(run_dir / str(final[0]["transcript"])) == final[0]["transcript_sha256"]
