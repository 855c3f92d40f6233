"""Reports of a run: ``summary.json`` (machine-readable), ``report.md`` and ``report.html``.

The report computes no statistics itself; it counts records and calls
``pairbench.analysis``. The summary's schema is documented in ``SUMMARY_SCHEMA.md``.

**Usage**::

    from pairbench.report import build_summary, write_reports

    summary = build_summary(run, results, infra)   # run.json content and the records
    paths = write_reports(run_dir, summary)        # summary.json, report.md, report.html
"""

from pairbench.report._html import render_html
from pairbench.report._markdown import render_markdown
from pairbench.report._summary import SCHEMA_ID, build_summary
from pairbench.report._write import ReportPaths, write_reports

__all__ = [
    "SCHEMA_ID",
    "ReportPaths",
    "build_summary",
    "render_html",
    "render_markdown",
    "write_reports",
]
