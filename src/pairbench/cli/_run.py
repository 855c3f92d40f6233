"""``pairbench run`` and ``pairbench resume``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from pairbench.cli._app import app, err, out, user_errors
from pairbench.cli._table import print_outcomes
from pairbench.report import write_report
from pairbench.runner import RunOutcome, resume_run, start_run
from pairbench.schedule import Schedule
from pairbench.store._lock import hold_writer_locks


def finish(outcome: RunOutcome, *, plots: bool = False) -> None:
    """Write the report, print the outcome table, and exit non-zero unless complete.

    Without ``plots`` the report leaves them out and says how to draw them: drawing costs
    about a second of CPU (matplotlib), more than a thousand no-op trials, for a run that
    may never be read; `pairbench report` and `pairbench view` draw them when it is.
    """
    paths = write_report(outcome.run_dir, plots=plots)
    print_outcomes(json.loads(paths.summary.read_text(encoding="utf-8"))["arms"])
    out.print(f"Run {outcome.run_id}: {outcome.status}")
    checked = outcome.interference
    if checked:  # a run with `proxy:`: what the server's counters said around each attempt
        found = ", ".join(f"{n} {status}" for status, n in sorted(checked.items()))
        out.print(f"Model server use around each attempt: {found}")
    out.print(f"Report: {paths.markdown}")
    if not plots:
        out.print(f"Plots:  pairbench report {outcome.run_dir}")
    if outcome.status == "interrupted":
        err.print(f"Interrupted. Finish it with: pairbench resume {outcome.run_dir}")
        raise typer.Exit(130)
    if not outcome.complete:
        raise typer.Exit(1)


def announce_campaigns(schedule: Schedule) -> None:
    """Print a campaign run's recorded execution order (run.json holds it already)."""
    if not schedule.campaigns:
        return
    err.print(f"{len(schedule.campaigns)} campaigns, one attempt at a time, in this order:")
    for campaign in schedule.campaigns:
        err.print(f"  {campaign.id}: {' → '.join(campaign.tasks)}")


class ModelServer(StrEnum):
    """The ``--model-server`` choices."""

    none = "none"
    local = "local"


@contextmanager
def serving(
    file: Path, model_server: ModelServer, concurrency: int | None
) -> Iterator[tuple[dict[str, Any] | None, int | None]]:
    """The local model server for the run (its identity, and the concurrency capped at its
    slots), or nothing when not asked for."""
    if model_server is ModelServer.none:
        yield None, concurrency
        return
    from pairbench.model._use import local_model_server
    from pairbench.spec import load_experiment

    loaded = load_experiment(file)
    with local_model_server(loaded) as (server, identity):
        wanted = concurrency or loaded.experiment.budget.concurrency
        workers = min(wanted, server.config.slots)
        err.print(
            f"serving the local model at {server.url}/v1 ({server.config.slots} slot(s); "
            f"concurrency {workers})",
            markup=False,
        )
        yield identity, workers


@app.command()
@user_errors
def run(
    file: Path = typer.Argument(..., help="The experiment.yaml to run."),
    runs_dir: Path = typer.Option(Path("runs"), help="Where run directories go."),
    run_seed: int | None = typer.Option(None, help="Run seed (default: drawn from the run ID)."),
    concurrency: int | None = typer.Option(
        None, min=1, help="Agent attempts in flight at once (a pair's arms still run in turn)."
    ),
    case_set: str | None = typer.Option(
        None, help="calibration or held-out (default: calibration when tasks are held out)."
    ),
    accept_harness_change: bool = typer.Option(
        False, help="Run a held-out set although pairbench changed since the freeze (recorded)."
    ),
    new_sitting: bool = typer.Option(
        False,
        help="Run a held-out set again under the same protocol version, as a new sitting "
        "(recorded in the ledger beside the lock; every report of the run names it).",
    ),
    accept_change: list[str] = typer.Option(
        [],
        "--accept-change",
        help="Run although NAME (a file's path, experiment, a grader's or fixture's name, "
        "study) changed since the freeze; repeat for each. Recorded; the report leads with it.",
    ),
    executor: str = typer.Option(
        "local", help="local (asyncio, this process) or ray (each attempt a Ray task)."
    ),
    address: str | None = typer.Option(
        None,
        help="ray: the cluster (auto, ray://host:10001); default: a new local Ray.",
    ),
    model_server: ModelServer = typer.Option(
        ModelServer.none,
        "--model-server",
        help="local: serve the local model (pairbench model install) at the openai agent's "
        "base_url for the run's length; concurrency is capped at its slots.",
    ),
    stage: str | None = typer.Option(
        None,
        "--stage",
        help="screening: one campaign pair of an experiment with order {block: campaign}, "
        "its order drawn from the run seed; reported without p values.",
    ),
    plan: Path | None = typer.Option(
        None,
        "--plan",
        help="An approved confirmation plan (pairbench approve): runs its pairs, seed and "
        "campaign order; refused if unapproved, edited, or for another experiment.",
    ),
) -> None:
    """Start a new run (a new run ID every time) and write its report.

    With --executor ray (the optional ray extra), attempts run as Ray tasks; this process
    keeps the schedule, the run directory and the journal. See docs/ray.md.
    With --model-server local, llama-server runs on 127.0.0.1 at the port the openai
    agent's base_url names, and its identity (model sha256, llama.cpp build) goes into
    run.json and the report.

    An experiment with order {block: campaign} runs one attempt at a time, as a screening
    pair (--stage screening) or from an approved plan (--plan); the campaigns' order is
    written to run.json and printed before the first attempt.

    Example:

        pairbench run experiment.yaml --runs-dir runs --run-seed 7
        pairbench run experiment.yaml --executor ray --address ray://head:10001
        pairbench run experiment.yaml --model-server local
        pairbench run experiment.yaml --stage screening
        pairbench run experiment.yaml --plan plan.json
        pairbench run experiment.yaml --accept-change prompts/a.md
    """
    # One writer from start to exit: the run's lock is still held while its report is written.
    with hold_writer_locks(), serving(file, model_server, concurrency) as (served, workers):
        finish(
            start_run(
                file,
                runs_dir,
                run_seed=run_seed,
                concurrency=workers,
                progress=sys.stderr.isatty(),
                case_set=case_set,
                accept_harness_change=accept_harness_change,
                new_sitting=new_sitting,
                accept_changes=accept_change,
                executor=executor,
                ray_address=address,
                model_server=served,
                stage=stage,
                plan=plan,
                announce=announce_campaigns,
            )
        )


@app.command()
@user_errors
def resume(
    run_dir: Path = typer.Argument(..., help="The run directory to finish."),
    executor: str | None = typer.Option(
        None, help="local or ray (default: the executor the run was started with)."
    ),
    address: str | None = typer.Option(
        None, help="ray: the cluster (default: the address the run was started with)."
    ),
) -> None:
    """Finish only the trials that have no final result; never re-run a finished one.

    Refuses if the experiment changed since the run started.

    Example:

        pairbench resume runs/mcp-transports-20261129T150000Z-1a2b3c
    """
    with hold_writer_locks():
        finish(
            resume_run(
                run_dir, progress=sys.stderr.isatty(), executor=executor, ray_address=address
            )
        )
