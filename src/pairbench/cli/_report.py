"""``pairbench report``: its own module, so writing a report never imports the runner."""

from __future__ import annotations

from pathlib import Path

import typer

from pairbench.cli._app import app, out, user_errors
from pairbench.report import write_report


@app.command(name="report")
@user_errors
def report_cmd(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    bootstrap_reps: int = typer.Option(
        10_000,
        "--bootstrap-reps",
        min=1,
        help="Resamples of each task-clustered bootstrap interval (recorded in the summary).",
    ),
    rescore: bool = typer.Option(
        False,
        "--rescore",
        help="When a grader's or the study's code changed since the run: write a separately "
        "named report (report-rescored.md/.html, summary-rescored.json) with a banner naming "
        "each change, leaving the run's report untouched.",
    ),
) -> None:
    """Write report.md, report.html and summary.json for a run (no agent needed).

    Reads the run's trial table (trials.npz, rebuilt from the journal when the journal
    has grown), so a report of a million trials takes seconds. Refused when a grader's or
    the study's code differs from the run's lock (the report would re-score the run with
    today's code), unless --rescore.

    Example:

        pairbench report runs/mcp-transports-20261129T150000Z-1a2b3c
        pairbench report runs/mcp-transports-20261129T150000Z-1a2b3c --rescore
    """
    paths = write_report(run_dir, bootstrap_reps=bootstrap_reps, rescore=rescore)
    out.print(f"Report: {paths.markdown}")
    out.print(f"HTML:   {paths.html}")
    out.print(f"JSON:   {paths.summary}")
