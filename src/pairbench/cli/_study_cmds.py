"""``pairbench study <name> ...`` and ``pairbench score --study <name>``: each study's own
commands and scorer, found through its ``Study`` hooks.

The ``study`` group lists the registered studies without importing them, and loads one only
when its commands are called (a study's commands may import a browser or a web server), as
sqlite-utils' plugins add commands through one hook the project's own commands could use.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text
from typer import _click as click
from typer.core import TyperGroup

from pairbench import _registry
from pairbench._errors import PairbenchError
from pairbench.cli._app import app, out, user_errors
from pairbench.studies import load_study


class StudyGroup(TyperGroup):
    """A click group whose commands are the registered studies, each loaded on use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return _registry.names("studies")

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _registry.names("studies"):
            return None
        study = load_study(cmd_name)
        cli = study.cli() if study.cli is not None else _no_commands(cmd_name)
        if cli.registered_callback is None:
            # A group even with one command: typer would make a lone command the group
            # itself, and `pairbench study NAME CMD` would then refuse CMD.
            cli.callback()(_group)
        command = typer.main.get_command(cli)
        command.name = cmd_name
        return command


def _group() -> None:
    pass


def _no_commands(name: str) -> typer.Typer:
    cli = typer.Typer(help=f"The {name} study adds no commands.")

    @cli.command("none", hidden=True)
    def _none() -> None:
        raise typer.Exit(2)

    return cli


study_app = typer.Typer(
    cls=StudyGroup,
    help="""Commands of one study (built-in or installed): `pairbench study NAME --help`.

Example:

    pairbench study webmcp-vs-pdf reference --json
""",
    no_args_is_help=True,
)
app.add_typer(study_app, name="study")


def _studies_with(hook: str) -> list[str]:
    return [n for n in _registry.names("studies") if getattr(load_study(n), hook) is not None]


@app.command()
@user_errors
def score(
    file: Path = typer.Argument(..., help="The raw answer (a file, or - for stdin)."),
    study: str = typer.Option(..., "--study", help="The study whose scorer to use."),
) -> None:
    """Score one raw answer with a study's scorer (``Study.score``): what it scored and why.

    Exits 0 with the table; exits 1 and prints "parse failure" when the answer cannot be read
    (a parse failure is not a zero score).

    Example:

        pairbench score --study webmcp-vs-pdf answer.json
    """
    scorer = load_study(study).score
    if scorer is None:
        have = ", ".join(_studies_with("score")) or "none"
        raise PairbenchError(f"--study {study!r} has no scorer; studies with one: {have}")
    try:
        raw = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PairbenchError(f"cannot read {file}: {exc}") from exc
    result = scorer(raw)
    if result.parse_failure:
        out.print(f"parse failure: {result.reason}", markup=False, highlight=False)
        raise typer.Exit(1)
    table = Table(title=f"{study}: {result.label}")
    # The first column and the verdicts stay whole (they are what a reader greps for); the
    # answer's values wrap on a narrow terminal and are never read as markup.
    for i, column in enumerate(result.headers):
        table.add_column(column, no_wrap=i == 0 or column in {"rule", "correct"})
    for row in result.rows:
        table.add_row(*(Text(cell) for cell in row))
    out.print(table)
    out.print(f"{result.label}: {result.reason}", markup=False, highlight=False)
