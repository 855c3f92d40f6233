"""``pairbench studies``, ``pairbench init`` and ``pairbench demo``."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import typer
from rich.table import Table

from pairbench import _registry
from pairbench._errors import PairbenchError
from pairbench.cli._app import app, out, user_errors
from pairbench.cli._run import finish
from pairbench.runner import start_run
from pairbench.studies import Study


def _study(name: str) -> Study:
    study = _registry.load("studies", name)
    if not isinstance(study, Study):
        raise PairbenchError(f"the registered study {name!r} is not a pairbench.studies.Study")
    return study


@app.command()
@user_errors
def studies() -> None:
    """List the built-in and installed studies.

    Example:

        pairbench studies
    """
    table = Table(title="Studies")
    table.add_column("name")
    table.add_column("title")
    for name in _registry.names("studies"):
        table.add_row(name, _study(name).title)
    out.print(table)


@app.command()
@user_errors
def init(
    directory: Path = typer.Argument(..., help="Folder to create (must not exist or be empty)."),
    from_study: str = typer.Option(..., "--from", help="The study to copy."),
) -> None:
    """Copy a study into DIRECTORY as an editable experiment.

    Example:

        pairbench init my-exp --from mcp-transports && pairbench run my-exp/experiment.yaml
    """
    study = _study(from_study)
    if directory.exists() and any(directory.iterdir()):
        raise PairbenchError(f"{directory} exists and is not empty; choose a new folder")
    shutil.copytree(
        study.root,
        directory,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    out.print(f"Copied {study.name} to {directory}. Run it with:")
    out.print(f"  pairbench run {directory / 'experiment.yaml'}")


@app.command()
@user_errors
def demo(
    runs_dir: Path = typer.Option(Path("runs"), help="Where run directories go."),
    run_seed: int | None = typer.Option(None, help="Run seed (default: drawn from the run ID)."),
) -> None:
    """Run the mcp-transports study with the scripted agent on embedded defaults.

    No network and no keys: a fixture MCP server over real stdio and streamable HTTP.

    Example:

        pairbench demo --runs-dir /tmp/runs
    """
    study = _study("mcp-transports")
    finish(
        start_run(study.experiment_path, runs_dir, run_seed=run_seed, progress=sys.stderr.isatty())
    )
