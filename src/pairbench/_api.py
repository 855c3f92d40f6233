"""Top-level operations over a run directory that are not running it."""

from __future__ import annotations

from pathlib import Path

from pairbench.report import ReportPaths, build_summary, write_reports
from pairbench.store._load_run import load_run


def write_report(run_dir: Path) -> ReportPaths:
    """Write ``report.md``, ``report.html`` and ``summary.json`` for a run; return their paths.

    **Usage**::

        paths = write_report(Path("runs/mcp-transports-20261129T150000Z-abc123"))
        print(paths.markdown)
    """
    run = load_run(run_dir)
    summary = build_summary(run.info, run.results, [*run.infra, *run.interrupted])
    return write_reports(run.run_dir.path, summary)
