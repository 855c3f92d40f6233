"""``write_reports``: summary.json, report.md and report.html, each written atomically."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pairbench.report._html import render_html
from pairbench.report._markdown import render_markdown
from pairbench.store._atomic import write_atomic


class ReportPaths(NamedTuple):
    """Where the three report files were written."""

    summary: Path
    markdown: Path
    html: Path


def summary_json(summary: Mapping[str, Any]) -> str:
    """Canonical JSON text of a summary; NaN or infinity is an error, never written."""
    return json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_reports(run_dir: Path, summary: Mapping[str, Any]) -> ReportPaths:
    """Write ``summary.json``, ``report.md`` and ``report.html`` into ``run_dir``.

    Each file is written to a temporary name, fsynced and renamed, so a crash leaves
    the old file or the new one, never half of one. Everything is rendered before the
    first file is written.

    Example::

        paths = write_reports(run_dir, build_summary(run, results, infra))
        paths.html  # run_dir / "report.html"
    """
    run_dir = Path(run_dir)
    texts = {
        "summary.json": summary_json(summary),
        "report.md": render_markdown(summary),
        "report.html": render_html(summary),
    }
    for name, text in texts.items():
        write_atomic(run_dir / name, text.encode("utf-8"))
    return ReportPaths(run_dir / "summary.json", run_dir / "report.md", run_dir / "report.html")
