import json
from pathlib import Path

import pytest

from pairbench import RunDirError
from pairbench.store import Journal, write_atomic
from pairbench.store._events import AttemptFinished, AttemptStarted, RunResumed, RunStarted


def test_journal_appends_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(AttemptStarted(key="a/t/0", attempt=1))
    journal.append(AttemptFinished(key="a/t/0", attempt=1, outcome="passed"))
    journal.close()
    events = Journal.read(path)
    assert [e.event for e in events] == ["attempt_started", "attempt_finished"]
    assert isinstance(events[1], AttemptFinished)
    assert events[1].outcome == "passed"


def test_a_torn_last_line_is_dropped_on_read_and_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    good = json.dumps({"event": "run_started", "run_id": "r", "planned": 1}) + "\n"
    path.write_text(good + '{"event": "attempt_sta', encoding="utf-8")
    assert [e.event for e in Journal.read(path)] == ["run_started"]
    journal = Journal(path)
    journal.append(RunResumed())
    journal.close()
    assert [e.event for e in Journal.read(path)] == ["run_started", "run_resumed"]


def test_a_corrupt_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text('{"event": "a"}\nnot json\n{"event": "b"}\n', encoding="utf-8")
    with pytest.raises(RunDirError, match=r"journal\.jsonl:2: not a JSON line"):
        Journal.read(path)


def test_atomic_write_never_overwrites_a_result(tmp_path: Path) -> None:
    target = tmp_path / "results" / "a" / "t" / "0.json"
    write_atomic(target, b"first", overwrite=False)
    with pytest.raises(FileExistsError):
        write_atomic(target, b"second", overwrite=False)
    assert target.read_bytes() == b"first"
    assert [p.name for p in target.parent.iterdir()] == ["0.json"]  # no temp file left


def test_a_failed_write_is_cut_back_so_later_lines_stay_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Disk full mid-line: the process goes on (recording interrupted attempts); a torn
    # fragment left in the middle of the journal would make it unreadable for resume.
    import errno
    import os

    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(RunStarted(run_id="r", planned=1))
    size = path.stat().st_size
    real_write = os.write

    def short_then_full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data)[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("pairbench.store._journal.os.write", short_then_full)
    with pytest.raises(OSError, match="No space"):
        journal.append(AttemptStarted(key="a/t/0", attempt=1))
    monkeypatch.setattr("pairbench.store._journal.os.write", real_write)
    assert path.stat().st_size == size
    journal.append(AttemptStarted(key="a/t/0", attempt=1))
    journal.close()
    assert [e.event for e in Journal.read(path)] == ["run_started", "attempt_started"]
