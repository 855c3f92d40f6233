"""``pairbench study webmcp-vs-pdf reference|serve``, ``pairbench study runtime-revision-ab
serve-model`` and ``pairbench score --study ...``."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from pairbench._errors import PairbenchError
from pairbench.cli._app import app, out, user_errors

study_app = typer.Typer(
    help="""Commands of one built-in study.

Example:

    pairbench study webmcp-vs-pdf reference --json
""",
    no_args_is_help=True,
)
webmcp_app = typer.Typer(
    help="The webmcp-vs-pdf study: reference answers and the people's page.",
    no_args_is_help=True,
)
study_app.add_typer(webmcp_app, name="webmcp-vs-pdf")
app.add_typer(study_app, name="study")

_SCORERS = ("webmcp-vs-pdf",)


def _fields(reference: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (f"{section}.{name}", value)
        for section, block in reference.items()
        for name, value in block.items()
    ]


@webmcp_app.command()
@user_errors
def reference(
    as_json: bool = typer.Option(False, "--json", help="Print the protocol's JSON shape."),
) -> None:
    """Print the reference answers (unrounded; the scorer applies the tolerances).

    Example:

        pairbench study webmcp-vs-pdf reference --json
    """
    from pairbench.studies.webmcp_vs_pdf import reference_answer

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


@webmcp_app.command()
@user_errors
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


@app.command()
@user_errors
def score(
    file: Path = typer.Argument(..., help="The raw answer (a file, or - for stdin)."),
    study: str = typer.Option(..., "--study", help="The study whose scorer to use."),
) -> None:
    """Score one raw answer with a study's scorer: the 13 fields and the total.

    Exits 0 with the fields; exits 1 and prints "parse failure" when the answer is not one
    JSON object (a parse failure is not a zero score).

    Example:

        pairbench score --study webmcp-vs-pdf answer.json
    """
    if study not in _SCORERS:
        raise PairbenchError(f"--study {study!r} has no scorer; choose {', '.join(_SCORERS)}")
    from pairbench.studies.webmcp_vs_pdf import score_answer

    try:
        raw = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PairbenchError(f"cannot read {file}: {exc}") from exc
    result = score_answer(raw)
    if result.parse_failure:
        out.print(f"parse failure: {result.reason}", markup=False, highlight=False)
        raise typer.Exit(1)
    table = Table(title=f"{study}: {result.label}")
    # The field's path and rule stay whole (they are what a reader greps for); the values
    # wrap on a narrow terminal.
    for column in ("field", "expected", "got", "rule", "correct"):
        table.add_column(column, no_wrap=column in {"field", "rule", "correct"})
    for field in result.fields:
        got = json.dumps(field.got) if field.present else "(missing)"
        table.add_row(
            field.path,
            Text(json.dumps(field.expected)),
            Text(got),  # the answer's text, never read as markup
            field.rule,
            "yes" if field.correct else "no",
        )
    out.print(table)
    out.print(f"{result.label}: {result.reason}", markup=False, highlight=False)


rab_app = typer.Typer(
    help="The runtime-revision-ab study: its scripted model server.", no_args_is_help=True
)
study_app.add_typer(rab_app, name="runtime-revision-ab")


@rab_app.command("serve-model")
@user_errors
def serve_model_cmd(
    port: int = typer.Option(18090, help="Port on 127.0.0.1 (the study's proxy.upstream)."),
) -> None:
    """Serve the study's scripted, llama.cpp-like model on 127.0.0.1 and print its base URL;
    Ctrl-C stops.

    It answers Chat Completions from per-scenario scripts (seeded branches) with usage and
    timings, plus /props, /slots, /health and /metrics, so runs are reproducible offline.

    Example:

        pairbench study runtime-revision-ab serve-model --port 18090
    """
    import threading

    from pairbench.studies.runtime_revision_ab import serve_model

    try:
        with serve_model(port) as server:
            sys.stdout.write(f"{server.base_url}\n")
            sys.stdout.flush()
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it stops
                threading.Event().wait()
    except OSError as exc:
        raise PairbenchError(f"cannot listen on 127.0.0.1:{port}: {exc}") from exc
