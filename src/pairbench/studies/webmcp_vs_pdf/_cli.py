"""``pairbench study webmcp-vs-pdf reference|serve`` and the study's ``pairbench score``."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from pairbench._errors import PairbenchError
from pairbench.cli._app import out, user_errors
from pairbench.studies import ScoredAnswer


def _fields(reference: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (f"{section}.{name}", value)
        for section, block in reference.items()
        for name, value in block.items()
    ]


def reference(
    as_json: bool = typer.Option(False, "--json", help="Print the protocol's JSON shape."),
) -> None:
    """Print the reference answers (unrounded; the scorer applies the tolerances).

    Example:

        pairbench study webmcp-vs-pdf reference --json
    """
    from pairbench.studies.webmcp_vs_pdf._reference import reference_answer

    answer = reference_answer()
    if as_json:
        sys.stdout.write(json.dumps(answer, indent=2) + "\n")
        return
    table = Table(title="webmcp-vs-pdf reference answer")
    table.add_column("field")
    table.add_column("value", justify="right")
    for path, value in _fields(answer):
        table.add_row(path, json.dumps(value))
    out.print(table)


def serve(
    runs_dir: Path = typer.Option(Path("runs"), help="The run store Living Evidence reads."),
    port: int = typer.Option(0, help="Port on 127.0.0.1 (0: any free port)."),
) -> None:
    """Serve the people's page on 127.0.0.1 and print its URL; Ctrl-C stops.

    Living Evidence shows every webmcp-vs-pdf run under RUNS_DIR (per-arm k/n with Wilson
    intervals, and the protocol's limits); the local scoring fields score pasted answers in
    memory and store nothing. The agent-facing page is at the same address, path /.

    Example:

        pairbench study webmcp-vs-pdf serve --runs-dir runs --port 8000
    """
    from pairbench.studies.webmcp_vs_pdf.site import bind, create_app
    from pairbench.studies.webmcp_vs_pdf.site import serve as serve_app

    try:
        sock = bind(port)
    except OSError as exc:
        raise PairbenchError(f"cannot listen on 127.0.0.1:{port}: {exc}") from exc

    def ready(base: str) -> None:
        sys.stdout.write(f"{base}/people\n")
        sys.stdout.flush()

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it stops
        serve_app(create_app(runs_dir, people=True), sock, ready)


def commands() -> typer.Typer:
    """The study's commands (``Study.cli``)."""
    cli = typer.Typer(
        help="The webmcp-vs-pdf study: reference answers and the people's page.",
        no_args_is_help=True,
    )
    cli.command()(user_errors(reference))
    cli.command()(user_errors(serve))
    return cli


def score(raw: str) -> ScoredAnswer:
    """``pairbench score --study webmcp-vs-pdf``: the 13 fields and the total."""
    from pairbench.studies.webmcp_vs_pdf._scorer import score_answer

    result = score_answer(raw)
    rows = tuple(
        (
            field.path,
            json.dumps(field.expected),
            json.dumps(field.got) if field.present else "(missing)",
            field.rule,
            "yes" if field.correct else "no",
        )
        for field in result.fields
    )
    return ScoredAnswer(
        parse_failure=result.parse_failure,
        label=result.label,
        reason=result.reason,
        headers=("field", "expected", "got", "rule", "correct"),
        rows=rows,
    )
