"""``pairbench source pin``: arms that are git revisions."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from pairbench.cli._app import app, out, user_errors

source_app = typer.Typer(
    help="""Arms that are git revisions of one repository.

Example:

    pairbench source pin main --repo ../minirt
""",
    no_args_is_help=True,
)
app.add_typer(source_app, name="source")


@source_app.command("pin")
@user_errors
def pin(
    ref: str = typer.Argument(..., help="A branch, tag or commit (any git revision)."),
    repo: Path = typer.Option(Path("."), "--repo", help="The repository (its top folder)."),
    as_json: bool = typer.Option(False, "--json", help="Print {repo, ref, commit} as JSON."),
) -> None:
    """Print the 40-hex commit REF names: what an arm's source.commit must hold.

    Branches and tags move, so experiments name commits. The repository is only read.

    Example:

        pairbench source pin main --repo ../minirt
        pairbench source pin v1.2 --repo ../minirt --json
    """
    from pairbench.source import pin as resolve

    commit = resolve(repo, ref)
    if as_json:
        out.print(json.dumps({"repo": str(repo), "ref": ref, "commit": commit}), highlight=False)
    else:
        out.print(commit, highlight=False)
