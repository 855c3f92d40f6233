"""Each run read once per state: its summary and its trial index, kept for the few runs
looked at last.

A run's state is the size and modification time of run.json, the journal, summary.json
and trials.npz, and who holds its writer lock: a run that moves (a live run's journal
grows) is read again, one that does not is served from memory. At most ``KEEP`` runs are
kept, so the server's memory stays bounded however many runs RUNS_DIR holds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from pairbench._errors import RunDirError
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.view._index import TrialIndex, build_index
from pairbench.view._paths import RunsRoot
from pairbench.view._runs import RunSummary, run_summary, writer_note

KEEP = 8
"""Runs whose summary and index stay in memory."""
_FILES = ("run.json", "journal.jsonl", "summary.json", "trials.npz")


@dataclass
class _Entry:
    stamp: tuple[object, ...]
    summary: RunSummary | None = None
    index: TrialIndex | None = None


class RunCache:
    """Summaries and indexes of the runs under one RUNS_DIR (thread-safe: the pages run in
    Starlette's thread pool)."""

    def __init__(self, root: RunsRoot, keep: int = KEEP) -> None:
        self.root = root
        self.keep = keep
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0
        """Indexes built (tests check a page does not rebuild one)."""

    def _stamp(self, run_id: str) -> tuple[object, ...]:
        path = self.root.run_path(run_id)
        parts: list[object] = [writer_note(path)]
        for name in _FILES:
            try:
                stat = (path / name).stat()
                parts.append((stat.st_size, stat.st_mtime_ns))
            except OSError:
                parts.append(None)
        return tuple(parts)

    def _entry(self, run_id: str) -> _Entry:
        stamp = self._stamp(run_id)
        entry = self._entries.get(run_id)
        if entry is None or entry.stamp != stamp:
            entry = _Entry(stamp)
            self._entries[run_id] = entry
        self._entries.move_to_end(run_id)
        while len(self._entries) > self.keep:
            self._entries.popitem(last=False)
        return entry

    def summary(self, run_id: str) -> RunSummary:
        """The run's summary (``NotFound`` for no such run; a damaged one has ``error``)."""
        with self._lock:
            entry = self._entry(run_id)
            if entry.summary is None:

                def index_of(run_dir: RunDir, info: RunRecord, ended: bool) -> TrialIndex:
                    if entry.index is None:
                        self.builds += 1
                        entry.index = build_index(run_dir, info, ended=ended)
                    return entry.index

                entry.summary = run_summary(self.root, run_id, index_of)
            return entry.summary

    def index(self, run_id: str) -> tuple[RunSummary, TrialIndex]:
        """The run's summary and index. Raises ``RunDirError`` naming the file and the fix
        when the run cannot be read."""
        summary = self.summary(run_id)
        if summary.info is None or summary.error:
            raise RunDirError(summary.error or f"{run_id}: cannot read the run")
        with self._lock:
            entry = self._entry(run_id)
            if entry.index is None:  # a run with no journal counts from its records
                self.builds += 1
                entry.index = build_index(
                    RunDir.open(self.root.run_path(run_id)), summary.info, ended=not summary.live
                )
            return summary, entry.index
