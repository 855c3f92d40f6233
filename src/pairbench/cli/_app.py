"""The typer application and the one place user errors become messages and exit codes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from pairbench._errors import PairbenchError, SpecError

app = typer.Typer(
    name="pairbench",
    help="Pre-registered, paired A/B experiments on AI agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


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
