"""``pairbench freeze``, ``pairbench verify`` and ``pairbench compare``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from pairbench.cli._app import app, err, out, user_errors
from pairbench.freeze._hashing import LEDGER_NAME
from pairbench.spec import load_experiment


@app.command()
@user_errors
def freeze(
    file: Path = typer.Argument(..., help="The experiment.yaml to freeze."),
    servers: bool = typer.Option(
        True,
        "--servers/--no-servers",
        help="Start each arm's MCP servers once and lock their identity (default), or not.",
    ),
    new_version: str | None = typer.Option(
        None,
        "--new-version",
        help="The protocol's new version (e.g. 1.0.1): needed to re-freeze after a held-out "
        "sitting; recorded in the lock and its ledger and shown with every later result.",
    ),
) -> None:
    """Write experiment.lock.json and protocol_hash.txt beside the experiment.

    The lock holds the canonical hash of the experiment, the SHA-256 of every file it names
    and of its graders' and fixtures' code, pairbench's version and source hash, and each
    MCP server's identity (serverInfo, protocol version, tool-list hash, package), found by
    starting it once. Paths are relative and nothing machine-specific goes in, so two
    checkouts freeze alike. The freeze is appended to experiment.ledger.jsonl beside the
    lock (commit it with the lock): after a held-out sitting, a changed lock needs
    --new-version.

    Example:

        pairbench freeze experiment.yaml && git add experiment.lock.json protocol_hash.txt \
            experiment.ledger.jsonl
        pairbench freeze experiment.yaml --new-version 1.0.1
    """
    from pairbench.fixtures._procs import FixtureError
    from pairbench.freeze import write_lock

    try:
        lock_file, hash_list, lock = write_lock(
            load_experiment(file), servers=servers, new_version=new_version
        )
    except FixtureError as exc:
        err.print(
            f"{file}: cannot identify an MCP server to lock: {exc}\n"
            "Fix: make the server start here (pairbench check names a missing command), or "
            "freeze with --no-servers (verify then cannot name a changed server)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1) from None
    out.print(
        f"Froze {lock.experiment['id']} (protocol version {lock.version()}): "
        f"{len(lock.files)} files, {len(lock.code)} code packages, {len(lock.servers)} servers"
    )
    ledger = f"\n  {lock_file.parent / LEDGER_NAME}" if lock.ledger else ""
    out.print(f"  {lock_file}\n  {hash_list}{ledger}")


@app.command()
@user_errors
def verify(
    target: Path = typer.Argument(..., help="An experiment.yaml, or a run directory."),
) -> None:
    """Recompute hashes and list every difference (exit 1 on any).

    On an experiment: against its experiment.lock.json. On a run directory: the journal's
    hash chain (from run.json through every line), every result, transcript and row against
    its journal line, trials.npz and the reports against a rebuild from the journal, and
    the run's lock.

    Example:

        pairbench verify experiment.yaml
        pairbench verify runs/mcp-transports-20261129T150000Z-1a2b3c
    """
    # Imported here: the run checks load numpy and the report stack, which every other
    # command (a run's start-up above all) would otherwise pay for at import.
    from pairbench.freeze import check_run_integrity, verify_experiment

    partial = None
    if target.is_dir():
        check = check_run_integrity(target)
        mismatches, partial = check.mismatches, check.partial
    else:
        mismatches = verify_experiment(target)
    if partial:
        err.print(f"{target}: {partial}", markup=False, highlight=False, style="yellow")
    if mismatches:
        for mismatch in mismatches:
            err.print(str(mismatch), markup=False, highlight=False)
        err.print(f"{len(mismatches)} mismatch(es): {target} does not verify.", style="bold red")
        raise typer.Exit(1)
    out.print(f"{target}: verified")


@app.command()
@user_errors
def compare(
    run_a: Path = typer.Argument(..., help="The first run directory (A)."),
    run_b: Path = typer.Argument(..., help="The second run directory (B)."),
    treatment: str | None = typer.Option(
        None,
        help="What may differ: arm, source, agent, model or tools (default: the "
        "experiment's declared treatment).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Compare two runs, paired on (arm, task, trial), if only the treatment differs.

    Anything else that differs (experiment, files, harness, packages, models, seeds) makes
    it an "invalid comparison": each mismatch is listed and the exit code is 1.

    Example:

        pairbench compare runs/A runs/B --treatment source
    """
    from pairbench.freeze._compare import compare_runs  # the statistics stack: on use

    result = compare_runs(run_a, run_b, treatment)
    if not result.valid:
        err.print(
            f"invalid comparison (treatment: {result.treatment}); these differ too:",
            style="bold red",
        )
        for mismatch in result.mismatches:
            err.print(f"  {mismatch}", markup=False, highlight=False)
        raise typer.Exit(1)
    if as_json:
        out.print_json(json.dumps({"treatment": result.treatment, "arms": result.arms}))
        return
    table = Table(title=f"{run_a.name} (A) vs {run_b.name} (B), treatment: {result.treatment}")
    for column in ("arm", "pairs", "both", "A only", "B only", "neither", "exact McNemar p"):
        table.add_column(column)
    for row in result.arms:
        p = row.get("mcnemar_exact_p")
        table.add_row(
            row["arm"],
            str(row["pairs"]),
            str(row["both"]),
            str(row["a_only"]),
            str(row["b_only"]),
            str(row["neither"]),
            "n/a" if p is None else f"{p:.4f}",
        )
    out.print(table)
