"""``pairbench view``: browse runs in a local, read-only web app."""

from __future__ import annotations

from pathlib import Path

import typer

from pairbench.cli._app import app, out, user_errors

DEFAULT_PORT = 8765
"""``pairbench.view.DEFAULT_PORT``, repeated so that ``--help`` loads no web stack."""


@app.command()
@user_errors
def view(
    runs_dir: Path = typer.Argument(Path("runs"), help="The folder holding the run folders."),
    port: int = typer.Option(
        DEFAULT_PORT, min=0, max=65535, help="Port on 127.0.0.1 (0: pick a free one)."
    ),
) -> None:
    """Browse runs in a local web app on 127.0.0.1: runs, reports, trials, transcripts.

    Read-only: it never writes into a run folder. Pages: the runs list, a run (its facts,
    counts and report), the trial browser (paged on the server; filter by arm, task,
    outcome, validity and text), one trial (result, grade, transcript timeline a part at a
    time, tool calls and latencies, the fixture's
    audit log, kept infra and interrupted attempts) and two runs compared. A run in
    progress reloads itself as it moves on. Only Host 127.0.0.1:PORT or localhost:PORT is
    served. See docs/view.md.

    Example:

        pairbench view runs --port 8765
    """
    from pairbench.view import serve  # the web stack loads only for this command

    def ready(url: str) -> None:
        out.print(f"pairbench view: {url} (read-only; Ctrl-C stops it)", markup=False)

    try:
        serve(runs_dir, port, on_ready=ready)
    except KeyboardInterrupt:
        # uvicorn stops cleanly on Ctrl-C, then re-raises the signal: a stop, not an error.
        out.print("pairbench view: stopped", markup=False)
