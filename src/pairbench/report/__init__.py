"""Reports of a run: ``summary.json`` (machine-readable), ``report.md`` and ``report.html``.

The report counts records and calls ``pairbench.analysis`` for every statistic; its one
piece of arithmetic is the conservative interval of a censored median difference, built
from ``order_statistic_rank``. Bootstrap seeds derive from the run seed, so a run always
reports the same numbers. The summary's schema is the model ``_schema.Summary``;
``SUMMARY_SCHEMA.md`` is generated from it.

**Usage**::

    from pairbench.report import build_summary, write_reports

    summary = build_summary(run, results, infra)   # run.json content and the records
    summary = summarize(run, load_table(run_dir).table)   # the same, from the trial table
    paths = write_reports(run_dir, summary)        # summary.json, report.md, report.html
"""

from pairbench.report._html import render_html
from pairbench.report._markdown import render_markdown
from pairbench.report._schema import SCHEMA_ID
from pairbench.report._summary import build_summary, summarize
from pairbench.report._write import ReportPaths, write_reports

__all__ = [
    "SCHEMA_ID",
    "ReportPaths",
    "build_summary",
    "render_html",
    "render_markdown",
    "summarize",
    "write_reports",
]
