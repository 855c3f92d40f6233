"""``pairbench study runtime-revision-ab serve-model | check-events`` (``Study.cli``)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import typer

from pairbench._errors import PairbenchError
from pairbench.cli._app import user_errors


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

    from pairbench.studies.runtime_revision_ab._model_server import serve_model

    try:
        with serve_model(port) as server:
            sys.stdout.write(f"{server.base_url}\n")
            sys.stdout.flush()
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it stops
                threading.Event().wait()
    except OSError as exc:
        raise PairbenchError(f"cannot listen on 127.0.0.1:{port}: {exc}") from exc


def check_events_cmd(
    path: Path = typer.Argument(..., help="A runtime's events file ($PAIRBENCH_EVENTS)."),
) -> None:
    """Check a runtime's event stream against pairbench.runtime-events/1 (EVENTS.md of the
    study): every line one event, seq rising. Exits 1 naming each bad line.

    Example:

        pairbench study runtime-revision-ab check-events runs/RUN/fixtures/.../events.jsonl
    """
    from pairbench.studies.runtime_revision_ab._dispatch_events import event_problems

    if not path.is_file():
        raise PairbenchError(f"{path}: no such file. Fix: name the file the runtime wrote")
    problems = event_problems(path)
    for line in problems:
        sys.stdout.write(f"{line}\n")
    if problems:
        raise typer.Exit(1)
    sys.stdout.write(f"{path}: valid pairbench.runtime-events/1\n")


def commands() -> typer.Typer:
    """The study's commands."""
    cli = typer.Typer(
        help="The runtime-revision-ab study: its scripted model server and the runtime "
        "event stream's checker.",
        no_args_is_help=True,
    )
    cli.command("serve-model")(user_errors(serve_model_cmd))
    cli.command("check-events")(user_errors(check_events_cmd))
    return cli
