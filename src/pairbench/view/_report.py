"""A run's report page: ``render_html`` over its summary.json, rendered in memory.

The view never writes report.html: it renders the summary the run holds each time it
changes (cached by the file's size and time), so the page is always the current report
code over the stored summary.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

_CACHED = 8
"""Rendered reports kept in memory (a page of plots can take a moment to render)."""


class ReportError(Exception):
    """summary.json is missing or cannot be rendered; the message says why and the fix."""


class ReportCache:
    """Rendered reports, by summary.json's path, size and modification time.

    One per process (:data:`REPORTS`): a report with plots takes a second or more to
    render, and the same summary renders to the same page for every app that asks.
    """

    def __init__(self) -> None:
        self._pages: OrderedDict[tuple[str, int, int], str] = OrderedDict()
        self._mutex = threading.Lock()

    def render(self, run: Path) -> str:
        """The report page of the run folder ``run``; raises ``ReportError``."""
        path = run / "summary.json"
        try:
            stat = path.stat()
        except OSError:
            raise ReportError(
                "no summary.json yet. Fix: wait for the run to end, or run "
                f"`pairbench report {run}`"
            ) from None
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        with self._mutex:
            if key in self._pages:
                self._pages.move_to_end(key)
                return self._pages[key]
        page = _render(path, run)
        with self._mutex:
            self._pages[key] = page
            while len(self._pages) > _CACHED:
                self._pages.popitem(last=False)
        return page


def _render(path: Path, run: Path) -> str:
    # The report stack (scipy, matplotlib) loads on the first report page, not at start.
    from pairbench.report.render._html import render_html

    try:
        summary: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReportError(
            f"summary.json cannot be read ({exc}). Fix: run `pairbench report {run}` to "
            "rebuild it from the run's records"
        ) from None
    if not isinstance(summary, dict):
        raise ReportError(
            f"summary.json is not a pairbench summary. Fix: run `pairbench report {run}`"
        )
    try:
        return render_html(summary)
    except Exception as exc:
        # A summary of another schema version (schema_id) lacks keys this report reads, and
        # whatever else goes wrong in the report code: the frame says so, the page stands.
        raise ReportError(
            f"summary.json ({summary.get('schema_id', 'no schema_id')}) cannot be shown by "
            f"this pairbench ({type(exc).__name__}: {exc}). Fix: run `pairbench report {run}`"
        ) from None


REPORTS = ReportCache()
"""The process's rendered reports."""
