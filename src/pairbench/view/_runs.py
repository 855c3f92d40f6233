"""The runs list and one run's overview, read from run.json and the journal only.

Counts come from the run's :class:`TrialIndex`: the journal's ``attempt_finished`` rows,
the record every report counts from (or, for an ended run, ``trials.npz`` when it was
built from the journal as it is), so a run in progress shows how far it got without
anything being rebuilt or written (``load_table`` would write ``trials.npz``: the view
never calls it).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pairbench._errors import RunDirError
from pairbench.store._load_run import load_run, read_run_info
from pairbench.store._lock import LOCK_NAME, process_alive
from pairbench.store._records import FINAL_OUTCOMES
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.view._index import TrialIndex, build_index
from pairbench.view._paths import RunsRoot

OUTCOMES = (
    "passed",
    "failed",
    "parse_failure",
    "agent_error",
    "timeout",
    "output_limit",
    "memory_limit",
    "disk_limit",
    "process_limit",
    "not_run",
    "infra",
    "interrupted",
)
"""Every outcome, in the order the pages list them (finals, then kept attempts)."""


@dataclass(frozen=True)
class Counts:
    """How far a run got, by arm: what the journal says has finished."""

    planned: dict[str, int]
    """Trials the schedule plans, per arm (empty when run.json holds no schedule)."""
    outcomes: dict[str, Counter[str]]
    """Per arm, final outcomes and kept attempts (``infra``, ``interrupted``) by outcome."""
    in_flight: int
    """Attempts started and not finished: running now, or cut off by a crash."""

    def total(self, outcome: str) -> int:
        return sum(c[outcome] for c in self.outcomes.values())

    @property
    def finished(self) -> int:
        """Trials with a final result."""
        return sum(n for c in self.outcomes.values() for o, n in c.items() if o in FINAL_OUTCOMES)

    @property
    def planned_total(self) -> int | None:
        return sum(self.planned.values()) if self.planned else None

    def arms(self) -> list[str]:
        return list(dict.fromkeys([*self.planned, *self.outcomes]))


@dataclass(frozen=True)
class RunSummary:
    """One run as the runs list and the run page show it."""

    run_id: str
    """The run folder's name (what URLs use)."""
    info: RunRecord | None
    """run.json with the journal's run events folded in; None when unreadable."""
    counts: Counts | None = None
    has_summary: bool = False
    writer: str | None = None
    """Who is writing the run now (``pid 12 (pairbench run)``), from its lock note."""
    error: str | None = None
    """Why the run could not be read (one line naming the file and the fix)."""
    version: str = ""
    """Changes whenever the run does: a page of a live run reloads when it moves."""

    @property
    def live(self) -> bool:
        """Whether the run may still change: running (never ended) or being written."""
        if self.info is None:
            return False
        return self.writer is not None or (self.info.status == "running" and not self.info.ended_at)

    @property
    def status(self) -> str:
        return self.info.status if self.info else "unreadable"


def _planned(info: RunRecord) -> dict[str, int]:
    schedule = info.schedule
    pairs = schedule.get("pairs", []) if isinstance(schedule, dict) else []
    orders = (p.get("order") if isinstance(p, dict) else None for p in pairs)
    # One Counter over a generator: a 50,000-pair schedule in a few milliseconds.
    planned = Counter(str(a) for order in orders if isinstance(order, list) for a in order)
    return {arm: planned[arm] for arm in [*info.arms, *planned] if planned[arm]}


IndexOf = Callable[[RunDir, RunRecord, bool], TrialIndex]
"""Builds (or returns from a cache) the index of a run: its dir, record, whether ended."""


def _index_counts(run_dir: RunDir, info: RunRecord, ended: bool, index_of: IndexOf) -> Counts:
    index = index_of(run_dir, info, ended)
    return Counts(_planned(info), index.outcome_counts(), index.in_flight)


def _record_counts(path: Path, info: RunRecord) -> Counts:
    """Counts of a run with no journal (written before there was one): its records."""
    loaded = load_run(path)
    outcomes: dict[str, Counter[str]] = {}
    for r in [*loaded.results, *loaded.infra, *loaded.interrupted]:
        if r.outcome != "not_run":  # not_run is what the planned counts leave over
            outcomes.setdefault(r.arm, Counter())[r.outcome] += 1
    return Counts(_planned(info), outcomes, 0)


def writer_note(path: Path) -> str | None:
    """Who holds the run's writer lock, from the note its holder writes into ``.lock``.

    Read, never locked: taking even a shared lock for a moment could refuse a ``resume``
    starting at that instant. The holder truncates the note when it lets go, so a note
    naming a live process means a writer; a PID reused since is a rare false positive that
    only makes the page keep polling.
    """
    try:
        data = json.loads((path / LOCK_NAME).read_text(encoding="utf-8"))
        pid, command = int(data["pid"]), str(data["command"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return f"pid {pid} ({command})" if process_alive(pid) else None


def _version(path: Path, status: str, writer: str | None) -> str:
    """A token that changes when the run does: the journal's and summary's sizes and times."""
    parts = [status, writer or ""]
    for name in ("journal.jsonl", "summary.json"):
        try:
            stat = (path / name).stat()
            parts.append(f"{stat.st_size}.{stat.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return "|".join(parts)


def _build(run_dir: RunDir, info: RunRecord, ended: bool) -> TrialIndex:
    return build_index(run_dir, info, ended=ended)


def run_summary(root: RunsRoot, run_id: str, index_of: IndexOf = _build) -> RunSummary:
    """The run's record and counts (from its :class:`TrialIndex`, which ``index_of``
    builds or caches); a damaged run comes back with ``error`` set.

    Raises ``NotFound`` when there is no such run.
    """
    path = root.run_path(run_id)
    writer = writer_note(path)
    has_summary = (path / "summary.json").is_file()
    try:
        run_dir = RunDir.open(path)
        info = read_run_info(run_dir)
    except RunDirError as exc:
        return RunSummary(run_id, None, error=str(exc), version=_version(path, "", writer))
    version = _version(path, info.status, writer)
    try:
        counts = (
            _index_counts(run_dir, info, _ended(info, writer), index_of)
            if run_dir.journal_path.exists()
            else _record_counts(path, info)
        )
    except RunDirError as exc:
        return RunSummary(run_id, info, None, has_summary, writer, str(exc), version)
    return RunSummary(run_id, info, counts, has_summary, writer, None, version)


def _ended(info: RunRecord, writer: str | None) -> bool:
    """Whether the run has ended and nothing writes it: its trials.npz may be trusted."""
    return writer is None and info.status != "running" and bool(info.ended_at)


def list_runs(
    root: RunsRoot, summary_of: Callable[[str], RunSummary] | None = None
) -> list[RunSummary]:
    """Every run under RUNS_DIR, newest first (by start time, then name)."""
    of = summary_of or (lambda run_id: run_summary(root, run_id))
    runs = [of(run_id) for run_id in root.run_ids()]
    return sorted(
        runs,
        key=lambda r: ((r.info.started_at or "") if r.info else "", r.run_id),
        reverse=True,
    )


@dataclass(frozen=True)
class RunFacts:
    """The run page's facts about a run: what it is, how it ran, who ran each arm."""

    rows: list[tuple[str, str]] = field(default_factory=list)
    agents: list[tuple[str, str, str]] = field(default_factory=list)
    """Per arm: arm, adapter, settings as JSON text."""
    tasks: list[tuple[str, str]] = field(default_factory=list)
    """Per task: id, labels as JSON text."""


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def run_facts(info: RunRecord) -> RunFacts:
    """What the run page lists about a run, as text (the template escapes it)."""
    rows = [
        ("run id", info.run_id),
        ("experiment", f"{info.experiment.id} {info.experiment.version or ''}".strip()),
        ("description", _text(info.experiment.description)),
        ("status", info.status),
        ("started", _text(info.started_at)),
        ("ended", _text(info.ended_at)),
        ("planned trials", _text(info.planned_trials)),
        ("run seed", _text(info.run_seed)),
        ("case set", _text(info.case_set)),
        ("comparisons", ", ".join(" vs ".join(c) for c in info.comparisons) or "—"),
        ("lock verified", _text(info.lock_verified)),
        ("simulated agent", _text(info.agent_simulated)),
        ("executor", _text(info.executor.name if info.executor else None)),
        ("invocations", ", ".join(f"{i.command} at {i.at}" for i in info.invocations) or "—"),
    ]
    agents = [
        (
            arm,
            (agent.adapter or "—") if agent else "—",
            _text(agent.settings) if agent and agent.settings else "",
        )
        for arm, agent in info.agents.items()
    ]
    tasks = [(t.id, _text(t.labels or {})) for t in info.tasks]
    return RunFacts(rows, agents, tasks)
