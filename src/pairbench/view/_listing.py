"""The trial browser's query: filter a run's :class:`TrialIndex` and cut one page of it.

Everything here is whole-column numpy work on the index, so a page of a 100,000-trial run
costs milliseconds and the browser only ever receives one page: ``PAGE_SIZE`` lines, as
HTML (``/runs/<run>/trials``) or JSON (``/runs/<run>/trials.json``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.view._index import TrialIndex
from pairbench.view._paths import NotFound, is_segment, link
from pairbench.view._runs import OUTCOMES

PAGE_SIZE = 200
"""Trials per page of the browser."""
FIRST_PAGE = 25
"""Trials the run page shows before "browse all"."""
VALIDITY = ("valid", "invalid", "unknown")
_VALID_CODE = {"valid": 1, "invalid": 0, "unknown": -1}
MAX_TEXT = 200
"""Characters of a text filter (a longer one is refused, not cut)."""
_MAX_PAGE_DIGITS = 9


@dataclass(frozen=True)
class TrialFilter:
    """The browser's query: each field empty for "any"."""

    arm: str = ""
    task: str = ""
    outcome: str = ""
    validity: str = ""
    text: str = ""
    """Case-insensitive, in the arm, task, reason or final answer."""
    page: int = 1

    def query(self, **changes: str) -> dict[str, str]:
        """The query string's fields, with ``changes`` applied (for page links)."""
        fields = {
            "arm": self.arm,
            "task": self.task,
            "outcome": self.outcome,
            "validity": self.validity,
            "q": self.text,
            "page": "" if self.page == 1 else str(self.page),
        }
        return fields | changes


@dataclass(frozen=True)
class TrialLine:
    """One trial in the browser: its final result (or not_run) and its kept attempts."""

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

    def as_json(self, run_id: str) -> dict[str, Any]:
        url = link("runs", run_id, "trials", self.arm, self.task, self.trial)
        return {
            "arm": self.arm,
            "task": self.task,
            "trial": self.trial,
            "attempt": self.attempt,
            "outcome": self.outcome,
            "validity": self.validity,
            "reason": self.reason,
            "wall_ms": self.wall_ms,
            "kept": self.kept,
            "url": url if self.linkable else None,
        }


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
    text = query.get("q", "").strip()
    if len(text) > MAX_TEXT:
        raise NotFound(f"a text filter of {len(text)} characters: at most {MAX_TEXT}")
    raw_page = query.get("page", "1") or "1"
    if not raw_page.isdigit() or len(raw_page) > _MAX_PAGE_DIGITS or int(raw_page) < 1:
        raise NotFound(f"no page {raw_page!r}: pages are numbered from 1")
    return TrialFilter(page=int(raw_page), text=text, **wanted)


def _excerpt(text: str, size: int = 160) -> str:
    text = text.strip()
    return text if len(text) <= size else text[: size - 1] + "…"


def _codes_containing(categories: list[str], needle: str) -> npt.NDArray[np.int64]:
    return np.array([i for i, c in enumerate(categories) if needle in c.casefold()], np.int64)


def _select(index: TrialIndex, f: TrialFilter) -> npt.NDArray[np.int64]:
    """Rows of the trials ``f`` selects, in browser order."""
    rows = index.final_order
    c, cats = index.columns, index.categories
    if f.arm:
        rows = rows[c["arm"][rows] == _code(cats["arm"], f.arm)]
    if f.task:
        rows = rows[c["task"][rows] == _code(cats["task"], f.task)]
    if f.validity:
        rows = rows[c["valid"][rows] == _VALID_CODE[f.validity]]
    if f.outcome:
        code = _code(cats["outcome"], f.outcome)
        kept = index.kept_rows
        with_kept = index.keys[kept[c["outcome"][kept] == code]]
        rows = rows[(c["outcome"][rows] == code) | np.isin(index.keys[rows], with_kept)]
    if f.text:
        needle = f.text.casefold()
        hit = np.zeros(len(rows), dtype=np.bool_)
        for name in ("arm", "task", "reason", "answer"):
            hit |= np.isin(c[name][rows], _codes_containing(cats[name], needle))
        rows = rows[hit]
    return rows


def _code(categories: list[str], value: str) -> int:
    return categories.index(value) if value in categories else -2


def _lines(index: TrialIndex, rows: npt.NDArray[np.int64]) -> list[TrialLine]:
    c = index.columns
    kept = index.kept_rows
    kept_keys = index.keys[kept]
    arms, tasks = index.strings("arm", rows), index.strings("task", rows)
    outcomes, reasons = index.strings("outcome", rows), index.strings("reason", rows)
    lines = []
    for i, row in enumerate(rows.tolist()):
        lo, hi = (
            np.searchsorted(kept_keys, index.keys[row], side="left"),
            np.searchsorted(kept_keys, index.keys[row], side="right"),
        )
        valid = int(c["valid"][row])
        wall = float(c["wall_ms"][row])
        lines.append(
            TrialLine(
                arm=arms[i],
                task=tasks[i],
                trial=int(c["trial"][row]),
                attempt=int(c["attempt"][row]),
                outcome=outcomes[i] or "interrupted",
                validity="unknown" if valid < 0 else "valid" if valid else "invalid",
                reason=_excerpt(reasons[i]),
                wall_ms=None if math.isnan(wall) else wall,
                kept=index.strings("outcome", kept[lo:hi]),
                linkable=is_segment(arms[i]) and is_segment(tasks[i]),
            )
        )
    return lines


def trial_listing(index: TrialIndex, f: TrialFilter, page_size: int = PAGE_SIZE) -> TrialListing:
    """One page of the trials ``f`` selects. Raises ``NotFound`` for a page past the last
    (a filter that matches nothing has one empty page)."""
    rows = _select(index, f)
    pages = max(1, -(-len(rows) // page_size))
    if f.page > pages:
        raise NotFound(f"no page {f.page}: these trials fill {pages} page(s)")
    shown = rows[(f.page - 1) * page_size : f.page * page_size]
    total = len(index.final_order)
    return TrialListing(
        _lines(index, shown), len(rows), total, f.page, pages, index.arms, index.tasks
    )
