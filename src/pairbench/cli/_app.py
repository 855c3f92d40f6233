"""The typer application and the one place user errors become messages and exit codes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from pairbench._errors import PairbenchError, SpecError
from pairbench._version import __version__

app = typer.Typer(
    name="pairbench",
    help="Pre-registered, paired A/B experiments on AI agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Markup off: what we print holds paths, names, agent text and fixes such as
# pip install 'pairbench[browser]', and rich would eat "[browser]" as a style tag.
out = Console(markup=False, soft_wrap=True)  # a path is never broken across lines
err = Console(stderr=True, markup=False, soft_wrap=True)

F = TypeVar("F", bound=Callable[..., Any])


def _print_version(value: bool) -> None:
    if value:
        out.print(f"pairbench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print pairbench's version and exit.",
        callback=_print_version,
        is_eager=True,
    ),
) -> None:
    """Pre-registered, paired A/B experiments on AI agents."""


def user_errors(func: F) -> F:
    """Print a ``PairbenchError`` as one clear message (no traceback) and exit non-zero."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except SpecError as exc:
            for problem in exc.problems:  # one line each, however long: never wrapped
                err.print(problem, markup=False, highlight=False, soft_wrap=True)
            err.print(f"{len(exc.problems)} problem(s) found.", style="bold red")
            raise typer.Exit(exc.exit_code) from None
        except PairbenchError as exc:
            err.print(f"error: {exc}", style="red", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None

    return wrapper  # type: ignore[return-value]
