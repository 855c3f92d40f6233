"""The group committer: shared fsyncs, files durable before the journal line, failures alone."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from pairbench.store import Journal
from pairbench.store._commit import CommitEntry, GroupCommitter, MoveFile, PutFile
from pairbench.store._events import AttemptFinished, AttemptStarted, JournalEvent


def _record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every fsync from now on, as the real path of the file or folder synced."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def _keys(events: list[JournalEvent]) -> list[str | None]:
    """Each line's trial key (None for a line that is not an attempt's)."""
    return [e.key if isinstance(e, AttemptStarted | AttemptFinished) else None for e in events]


def _run(tmp_path: Path, body: Callable[[GroupCommitter], Awaitable[None]]) -> list[JournalEvent]:
    journal = Journal(tmp_path / "journal.jsonl")

    async def main() -> None:
        committer = GroupCommitter(journal, tmp_path)
        try:
            await body(committer)
        finally:
            await committer.aclose()

    asyncio.run(main())
    journal.close()
    return Journal.read(tmp_path / "journal.jsonl")


def test_entries_queued_together_share_one_journal_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = _record_fsyncs(monkeypatch)
    batches: list[int] = []

    async def body(committer: GroupCommitter) -> None:
        futures = [
            committer.submit(
                CommitEntry(
                    AttemptFinished(key=f"a/t/{i}", attempt=1),
                    (PutFile(tmp_path / "results" / "a" / "t" / f"{i}.json", b"{}\n"),),
                )
            )
            for i in range(5)
        ]
        await asyncio.gather(*futures)
        batches.append(committer.batches)

    events = _run(tmp_path, body)
    assert batches == [1]
    assert _keys(events) == [f"a/t/{i}" for i in range(5)]  # submission order
    journal = os.path.realpath(tmp_path / "journal.jsonl")
    assert synced.count(journal) == 1
    results = tmp_path / "results" / "a" / "t"
    assert sorted(p.name for p in results.iterdir()) == [f"{i}.json" for i in range(5)]
    # The folder of the five results is fsynced once for the batch, not once per file.
    assert synced.count(os.path.realpath(results)) == 1


def test_a_new_folder_is_made_durable_up_to_the_run_directory_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = _record_fsyncs(monkeypatch)
    target = tmp_path / "results" / "a" / "t"

    async def body(committer: GroupCommitter) -> None:
        for i in range(2):
            await committer.commit(
                CommitEntry(
                    AttemptFinished(key=f"a/t/{i}", attempt=1),
                    (PutFile(target / f"{i}.json", b"x"),),
                )
            )

    _run(tmp_path, body)
    real = os.path.realpath
    for folder in (tmp_path / "results" / "a", tmp_path / "results", tmp_path):
        assert synced.count(real(folder)) == 1, folder  # the chain: only the first time
    assert synced.count(real(target)) == 2  # the folder that gained a name: every batch
    assert real(tmp_path.parent) not in synced  # stops at the run directory


def test_a_result_that_exists_fails_its_entry_alone(tmp_path: Path) -> None:
    existing = tmp_path / "results" / "0.json"
    existing.parent.mkdir(parents=True)
    existing.write_bytes(b"first")
    outcomes: list[BaseException | None] = []

    async def body(committer: GroupCommitter) -> None:
        taken = committer.submit(
            CommitEntry(AttemptFinished(key="a/t/0", attempt=1), (PutFile(existing, b"second"),))
        )
        fresh = committer.submit(
            CommitEntry(
                AttemptFinished(key="a/t/1", attempt=1),
                (PutFile(existing.with_name("1.json"), b"new"),),
            )
        )
        done = await asyncio.gather(taken, fresh, return_exceptions=True)
        outcomes.extend(d if isinstance(d, BaseException) else None for d in done)

    events = _run(tmp_path, body)
    assert isinstance(outcomes[0], FileExistsError) and outcomes[1] is None
    assert _keys(events) == ["a/t/1"]  # the failed entry's line is not written
    assert existing.read_bytes() == b"first"  # never overwritten
    assert sorted(p.name for p in existing.parent.iterdir()) == ["0.json", "1.json"]  # no temp


def test_a_moved_file_is_fsynced_through_its_handle_then_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = _record_fsyncs(monkeypatch)
    source = tmp_path / "transcripts" / "0.1.partial"
    source.parent.mkdir(parents=True)
    handle = source.open("wb")
    handle.write(b'{"kind": "final"}\n')
    target = tmp_path / "transcripts" / "0.jsonl"

    async def body(committer: GroupCommitter) -> None:
        await committer.commit(
            CommitEntry(
                AttemptFinished(key="a/t/0", attempt=1), (MoveFile(source, target, handle),)
            )
        )

    _run(tmp_path, body)
    assert handle.closed and not source.exists()
    assert target.read_bytes() == b'{"kind": "final"}\n'
    # Synced under its old name (before the rename), then the folder after the rename.
    assert synced.index(os.path.realpath(source)) < synced.index(os.path.realpath(target.parent))


def test_a_line_without_files_rides_on_the_batch_being_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked, release = threading.Event(), threading.Event()
    real = os.fsync

    def slow_fsync(fd: int) -> None:
        # Held in the batch's folder fsyncs: its files are written by then, and so is any
        # line that went early between them (_early_starts), so a line queued while this
        # waits can only join the batch's own journal write. (Held in the file's fsync
        # instead, the writer thread could reach _early_starts after the line was queued,
        # and write it early in a journal fsync of its own.)
        if stat.S_ISDIR(os.fstat(fd).st_mode) and not release.is_set():
            blocked.set()
            release.wait(10)
        real(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    batches: list[int] = []

    async def body(committer: GroupCommitter) -> None:
        finished = committer.submit(
            CommitEntry(
                AttemptFinished(key="a/t/0", attempt=1), (PutFile(tmp_path / "0.json", b"x"),)
            )
        )
        await asyncio.to_thread(blocked.wait, 10)  # the writer is past the batch's files
        started = committer.submit(CommitEntry(AttemptStarted(key="b/t/0", attempt=1)))
        release.set()
        await asyncio.gather(finished, started)
        batches.append(committer.batches)

    events = _run(tmp_path, body)
    assert batches == [1]
    assert [e.event for e in events] == ["attempt_finished", "attempt_started"]


def test_aclose_commits_what_was_queued_but_not_awaited(tmp_path: Path) -> None:
    async def body(committer: GroupCommitter) -> None:
        # As Ctrl-C does: the cancelled attempts queue their records and nobody waits.
        for i in range(3):
            committer.submit(
                CommitEntry(
                    AttemptFinished(key=f"a/t/{i}", attempt=1),
                    (PutFile(tmp_path / f"{i}.json", b"x"),),
                )
            )

    events = _run(tmp_path, body)
    assert _keys(events) == ["a/t/0", "a/t/1", "a/t/2"]
    assert all((tmp_path / f"{i}.json").is_file() for i in range(3))


def test_a_start_is_not_held_up_by_a_batch_of_other_attempts_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wave of finishing attempts makes one big batch; an attempt starting meanwhile
    # waits for its start line only, not for every result file of the batch.
    inside, release_0, release_1 = threading.Event(), threading.Event(), threading.Event()
    real = os.fsync

    def held_fsync(fd: int) -> None:
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        if name.startswith(".0.json.") and name.endswith(".tmp"):
            inside.set()
            release_0.wait(10)
        if name.startswith(".1.json.") and name.endswith(".tmp"):
            release_1.wait(10)
        real(fd)

    monkeypatch.setattr(os, "fsync", held_fsync)

    async def body(committer: GroupCommitter) -> None:
        finished = [
            committer.submit(
                CommitEntry(
                    AttemptFinished(key=f"a/t/{i}", attempt=1),
                    (PutFile(tmp_path / f"{i}.json", b"x"),),
                )
            )
            for i in range(3)
        ]
        await asyncio.to_thread(inside.wait, 10)  # the writer is inside the batch's files
        started = committer.submit(CommitEntry(AttemptStarted(key="b/t/0", attempt=1)))
        release_0.set()
        await asyncio.wait_for(started, 5)  # durable while entry 1's file is still held
        assert not any(f.done() for f in finished)
        release_1.set()
        await asyncio.gather(*finished)

    events = _run(tmp_path, body)
    assert [e.event for e in events] == ["attempt_started"] + ["attempt_finished"] * 3


def test_a_queued_entry_that_fails_is_reported_once_not_left_unretrieved(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A record queued by an attempt being cancelled has no one awaiting it: its failure
    # (here a real one: its folder's name is taken by a file) is the committer's
    # `unstored`, and asyncio never logs "Future exception was never retrieved".
    import gc

    (tmp_path / "results").write_bytes(b"not a folder")
    journal = Journal(tmp_path / "journal.jsonl")
    seen: list[BaseException | None] = []

    async def main() -> None:
        committer = GroupCommitter(journal, tmp_path)
        ok = AttemptFinished(key="a/t/0", attempt=1, outcome="interrupted")
        committer.queue(CommitEntry(ok))
        bad = PutFile(tmp_path / "results" / "a" / "0.json", b"{}")
        committer.queue(CommitEntry(AttemptFinished(key="a/t/1", attempt=1), (bad,)))
        await committer.aclose()
        seen.append(committer.unstored)

    with caplog.at_level("ERROR", logger="asyncio"):
        asyncio.run(main())
        gc.collect()
    journal.close()
    assert isinstance(seen[0], OSError)
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
    assert "a/t/1" not in _keys(Journal.read(tmp_path / "journal.jsonl"))


def test_a_temporary_file_an_earlier_crash_left_is_skipped_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import itertools

    from pairbench.store import _commit

    # The next temporary name is taken already (a crash of a process with this pid).
    monkeypatch.setattr(_commit, "_TMP_NAMES", itertools.count(7))
    leftover = tmp_path / f".0.json.{os.getpid()}-7.tmp"
    leftover.write_bytes(b"left by a crash")

    async def body(committer: GroupCommitter) -> None:
        await committer.submit(
            CommitEntry(
                AttemptFinished(key="a/t/0", attempt=1), (PutFile(tmp_path / "0.json", b"x"),)
            )
        )

    assert _keys(_run(tmp_path, body)) == ["a/t/0"]
    assert (tmp_path / "0.json").read_bytes() == b"x"
    assert leftover.read_bytes() == b"left by a crash"
    assert [p.name for p in tmp_path.glob(".*.tmp")] == [leftover.name]  # its own is gone
