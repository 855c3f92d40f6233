"""``write_reports``: summary.json, report.md and report.html, each written atomically."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pairbench._errors import RunDirError
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


def render_texts(summary: Mapping[str, Any]) -> dict[str, str]:
    """The three report files' texts: byte-deterministic for one summary (``verify``
    rebuilds them and compares bytes)."""
    return {
        "summary.json": summary_json(summary),
        "report.md": render_markdown(summary),
        "report.html": render_html(summary),
    }


def write_texts(run_dir: Path, texts: Mapping[str, str]) -> ReportPaths:
    """Write rendered report texts (:func:`render_texts`) into ``run_dir``, each atomically."""
    for name, text in texts.items():
        try:
            write_atomic(run_dir / name, text.encode("utf-8"))
        except OSError as exc:  # a folder in its place, a read-only run, a full disk
            raise RunDirError(
                f"{run_dir / name}: cannot write the report ({exc.strerror or exc}). Fix: "
                "remove what is in its place, or free space; the run's records are untouched"
            ) from None
    return ReportPaths(run_dir / "summary.json", run_dir / "report.md", run_dir / "report.html")


def write_reports(run_dir: Path, summary: Mapping[str, Any]) -> ReportPaths:
    """Write ``summary.json``, ``report.md`` and ``report.html`` into ``run_dir``.

    Each file is written to a temporary name, fsynced and renamed, so a crash leaves
    the old file or the new one, never half of one. Everything is rendered before the
    first file is written.

    Example::

        paths = write_reports(run_dir, build_summary(run, results, infra))
        paths.html  # run_dir / "report.html"
    """
    return write_texts(Path(run_dir), render_texts(summary))
