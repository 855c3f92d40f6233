"""The command-line interface: thin typer commands over the public API."""

from __future__ import annotations

from pairbench.cli import (  # noqa: F401 - registers commands
    _approve,
    _check,
    _export,
    _freeze,
    _import,
    _model,
    _plan,
    _run,
    _source,
    _studies,
    _study_cmds,
    _view,
)
from pairbench.cli._app import app


def main() -> None:
    """Entry point of the ``pairbench`` console script."""
    app()


__all__ = ["app", "main"]
