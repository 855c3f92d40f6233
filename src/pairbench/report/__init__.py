"""Reports of a run: ``summary.json`` (machine-readable), ``report.md`` and ``report.html``.

One public operation, :func:`write_report`, in three stages, one folder each:

1. ``summary/``: the typed ``Summary`` from the run's trial table. The report counts
   records and calls ``pairbench.analysis`` for every statistic; its one piece of
   arithmetic is the conservative interval of a censored median difference, built from
   ``order_statistic_rank``. Bootstrap seeds derive from the run seed, so a run always
   reports the same numbers. ``summary/SUMMARY_SCHEMA.md`` is generated from the models.
2. ``view/``: the summary laid out as sections of paragraphs, tables and plots, the
   sections those the study declares (``report:`` in the experiment).
3. ``render/``: the view as markdown and self-contained HTML, its plots as byte-stable SVG.

A study's own sections and plots (``pairbench.StudyReport``) are built from the same
blocks: :class:`Section` of paragraphs, :class:`Table` and :class:`Figure` (an inline SVG
with its words and numbers), or :class:`Omitted` for a plot with nothing to draw.

(``pairbench view`` is the local web app that serves rendered reports and trials.)

**Usage**::

    from pairbench.report import write_report

    paths = write_report(run_dir)   # summary.json, report.md, report.html
    paths.html                      # run_dir / "report.html"
"""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
    from pairbench.report._write import ReportPaths, write_report
    from pairbench.report.summary._schema import SCHEMA_ID
    from pairbench.report.view._doc import Figure, Omitted, Section, Table

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Figure": "pairbench.report.view._doc",
        "Omitted": "pairbench.report.view._doc",
        "ReportPaths": "pairbench.report._write",
        "SCHEMA_ID": "pairbench.report.summary._schema",
        "Section": "pairbench.report.view._doc",
        "Table": "pairbench.report.view._doc",
        "write_report": "pairbench.report._write",
    },
)

__all__ = ["SCHEMA_ID", "Figure", "Omitted", "ReportPaths", "Section", "Table", "write_report"]
