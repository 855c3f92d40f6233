"""The trial browser's list: a run's trials, filtered, one page at a time.

Read from the journal's rows (``load_table``; nothing written), as the report reads a run:
no record file is opened, so an answer or a transcript an agent made huge is never loaded
to render the list.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pairbench.store._load_table import load_table
from pairbench.view._paths import NotFound, is_segment
from pairbench.view._runs import OUTCOMES

PAGE_SIZE = 200
"""Trials per page of the browser."""
VALIDITY = ("valid", "invalid", "unknown")


def _excerpt(text: str | None, size: int = 160) -> str:
    text = (text or "").strip()
    return text if len(text) <= size else text[: size - 1] + "…"


@dataclass(frozen=True)
class TrialFilter:
    """The browser's query: each field empty for "any"."""

    arm: str = ""
    task: str = ""
    outcome: str = ""
    validity: str = ""
    page: int = 1

    def query(self, **changes: str) -> dict[str, str]:
        """The query string's fields, with ``changes`` applied (for page links)."""
        fields = {
            "arm": self.arm,
            "task": self.task,
            "outcome": self.outcome,
            "validity": self.validity,
            "page": "" if self.page == 1 else str(self.page),
        }
        return fields | changes


@dataclass(frozen=True)
class TrialLine:
    """One trial in the browser: its final result and its kept attempts."""

    arm: str
    task: str
    trial: int
    attempt: int
    outcome: str
    validity: str
    reason: str
    """An excerpt."""
    wall_ms: float | None
    kept: list[str]
    """The outcomes of the attempts kept beside it (``infra``, ``interrupted``)."""
    linkable: bool
    """Whether arm and task are plain names (a page exists for it)."""


@dataclass(frozen=True)
class TrialListing:
    """One page of the browser."""

    lines: list[TrialLine]
    matched: int
    total: int
    page: int
    pages: int
    arms: list[str]
    tasks: list[str]


def parse_filter(query: Mapping[str, str], arms: list[str], tasks: list[str]) -> TrialFilter:
    """The filter a query asks for; raises ``NotFound`` naming a value the run has not."""
    wanted = {k: query.get(k, "").strip() for k in ("arm", "task", "outcome", "validity")}
    choices = {"arm": arms, "task": tasks, "outcome": list(OUTCOMES), "validity": list(VALIDITY)}
    for name, value in wanted.items():
        if value and value not in choices[name]:
            raise NotFound(f"this run has no {name} {value!r}")
    raw_page = query.get("page", "1") or "1"
    if not raw_page.isdigit() or int(raw_page) < 1:
        raise NotFound(f"no page {raw_page!r}")
    return TrialFilter(page=int(raw_page), **wanted)


class _Row(NamedTuple):
    """One record as the list needs it, from its journal row (never its file)."""

    arm: str
    task: str
    trial: int
    attempt: int
    outcome: str
    validity: str
    reason: str
    wall_ms: float | None
    kept: bool


class RunTrials(NamedTuple):
    """A run read for the browser: every record's row, and the arms and tasks they name."""

    rows: list[_Row]
    arms: list[str]
    """Declared arms first, then any other arm a record names."""
    tasks: list[str]
    """Declared tasks first, then any other task a record names."""


_VALID = {1: "valid", 0: "invalid", -1: "unknown"}


def read_run(path: Path) -> RunTrials:
    """The run folder ``path`` for the browser; raises ``RunDirError`` if damaged.

    Read as the report reads it, from the journal's rows (``load_table``, nothing
    written): a record's answer and transcript are never loaded for the list, however
    large an agent made them.
    """
    loaded = load_table(path, use_cache=False)
    table = loaded.table
    cols = table.columns
    walls = cols["wall_ms"].tolist()
    rows = [
        _Row(
            arm=arm or "",
            task=task or "",
            trial=int(trial),
            attempt=int(attempt),
            outcome=outcome or "",
            validity=_VALID.get(int(valid), "unknown"),
            reason=_excerpt(reason),
            wall_ms=None if math.isnan(wall) else float(wall),
            kept=bool(kept),
        )
        for arm, task, trial, attempt, outcome, valid, reason, wall, kept in zip(
            table.strings("arm"),
            table.strings("task"),
            cols["trial"].tolist(),
            cols["attempt"].tolist(),
            table.strings("outcome"),
            cols["valid"].tolist(),
            table.strings("reason"),
            walls,
            cols["kept"].tolist(),
            strict=True,
        )
    ]
    info = loaded.info
    arms = list(dict.fromkeys([*info.arms, *(r.arm for r in rows)]))
    tasks = list(dict.fromkeys([*(t.id for t in info.tasks), *(r.task for r in rows)]))
    return RunTrials(rows, arms, tasks)


def trial_listing(run: RunTrials, f: TrialFilter) -> TrialListing:
    """The trials ``f`` selects, one page of them, in arm, task and trial order."""
    rows, arms, tasks = run
    kept: dict[tuple[str, str, int], list[str]] = {}
    for r in sorted((r for r in rows if r.kept), key=lambda r: r.attempt):
        kept.setdefault((r.arm, r.task, r.trial), []).append(r.outcome)
    arm_order = {a: i for i, a in enumerate(arms)}
    task_order = {t: i for i, t in enumerate(tasks)}
    results = sorted(
        (r for r in rows if not r.kept),
        key=lambda r: (arm_order.get(r.arm, 0), task_order.get(r.task, 0), r.trial),
    )
    lines = []
    for r in results:
        others = kept.get((r.arm, r.task, r.trial), [])
        if (f.arm and r.arm != f.arm) or (f.task and r.task != f.task):
            continue
        if f.validity and r.validity != f.validity:
            continue
        if f.outcome and f.outcome != r.outcome and f.outcome not in others:
            continue
        lines.append(
            TrialLine(
                arm=r.arm,
                task=r.task,
                trial=r.trial,
                attempt=r.attempt,
                outcome=r.outcome,
                validity=r.validity,
                reason=r.reason,
                wall_ms=r.wall_ms,
                kept=others,
                linkable=is_segment(r.arm) and is_segment(r.task),
            )
        )
    pages = max(1, -(-len(lines) // PAGE_SIZE))
    page = min(f.page, pages)
    shown = lines[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    return TrialListing(shown, len(lines), len(results), page, pages, arms, tasks)
