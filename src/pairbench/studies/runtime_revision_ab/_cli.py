"""``pairbench study runtime-revision-ab serve-model`` (``Study.cli``)."""

from __future__ import annotations

import contextlib
import sys

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


def commands() -> typer.Typer:
    """The study's commands."""
    cli = typer.Typer(
        help="The runtime-revision-ab study: its scripted model server.", no_args_is_help=True
    )
    cli.command("serve-model")(user_errors(serve_model_cmd))
    return cli
