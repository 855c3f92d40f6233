"""``pairbench export``: a run's attempts as CSV, JSONL or Parquet; its decisions as JUnit."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from pairbench._errors import ExportError
from pairbench.cli._app import app, err, user_errors


class ExportFormat(StrEnum):
    """The ``--format`` choices: the store's formats (``FORMATS``), in its order."""

    csv = "csv"
    jsonl = "jsonl"
    parquet = "parquet"
    junit = "junit"


@app.command()
@user_errors
def export(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    fmt: ExportFormat = typer.Option(
        ExportFormat.csv,
        "--format",
        help="csv, jsonl or parquet (one row per attempt), or junit (the declared decisions).",
    ),
    out_file: Path | None = typer.Option(
        None,
        "--out",
        help="The file to write (default: standard output; parquet needs a file).",
    ),
    force: bool = typer.Option(False, "--force", help="Replace the --out file if it exists."),
) -> None:
    """Export a run: every attempt with its metrics' provenance, or its decisions as JUnit.

    csv, jsonl and parquet hold one row per attempt: each trial's final result (a planned
    trial that never ran is a not_run row, attempt 0) and each kept infra or interrupted
    attempt. The same columns come back from pairbench.load_frame(RUN) as a pandas
    DataFrame (pip install 'pairbench\\[frame]', which parquet needs too). Columns:

    \b
      run_id, experiment, arm, task     the experiment (study) id; the arm and task
      label.<key>                       each task label (label.tier)
      trial, attempt, final             attempt 1, 2 = the retry after an infra failure,
                                        0 = never ran; final false = a kept attempt
      seed, model_seed, start_order     the pair's seeds; the arm's place in its pair
      agent, simulated                  the adapter; a simulated agent's draw
      started_at, ended_at              ISO 8601 with time zone
      outcome, reason                   passed, failed, parse_failure, agent_error,
                                        timeout, not_run, infra or interrupted
      valid, off_surface                stayed on the arm's surface; calls that did not
      grade_outcome, grade_reason       the grader's verdict
      grade.<key>                       its details (nested keys joined by dots)
      <metric>                          the value: empty (null) when missing, never 0
      <metric>_provenance               measured, estimated or missing
      <metric>_source                   measured: whose accounting; estimated: estimator
      <metric>_reason                   missing: why
      tool_calls, tool_call_errors      tool calls made, and how many returned an error
      transport_failures,               transport failures, and their kinds (a list)
      transport_failure_kinds
      security                          whether security probes were recorded
      prompt_injection_compliance,      the probes' verdicts: complied with an injection
      injection_seen, secret_in_output, (empty: not tested), saw one, leaked a canary,
      secret_locations,                 where; a token-shaped string found, its kinds
      token_shaped_in_output, token_shaped
      seeding, seeding_requests,        seeded, unseeded or not_applicable; model
      seeding_requests_with_seed,       requests sent, and how many carried the seed
      seeding_reason
      models_seen, final_answer         model ids reported (a list); the agent's answer
      transcript_sha256                 the transcript's hash

    Metrics: wall_ms, agent_ms, turns, input_tokens, output_tokens, cost_usd,
    cold_start_ms, uncached_input_tokens, cache_creation_input_tokens,
    cache_read_input_tokens, total_tokens, connect_ms (sum over the MCP servers) and
    tool_client_ms (median client latency of the timed tool calls). Lists are JSON text;
    in csv an empty cell is null and booleans are true and false. Rows are sorted by arm
    and task (declared order), trial and attempt, so one run gives the same bytes every
    time; nothing in the run is written, so verify is unchanged.

    junit: one testcase per declared hypothesis (experiment.yaml hypotheses:), read from
    summary.json (run pairbench report first): equivalent or differs passes, not shown
    equivalent or no difference shown is a failure, not computed is an error, each with
    its numbers. A run that declares none is refused: comparisons carry no decision rule.
    The command exits 0 once the file is written; the CI's JUnit reader fails the gate.

    --out never replaces a file without --force.

    Example:

        pairbench export runs/mcp-transports-20261129T150000Z-1a2b3c > trials.csv
        pairbench export RUN --format parquet --out trials.parquet
        pairbench export RUN --format junit --out decisions.xml
        python -c "import pairbench; print(pairbench.load_frame('RUN').head())"
    """
    from pairbench.store._export import Format, export_bytes, write_export

    chosen: Format = fmt.value
    to_stdout = out_file is None or str(out_file) == "-"
    if to_stdout and chosen == "parquet":
        raise ExportError(
            "parquet is binary, so it is written only to a file. Fix: give one, "
            f"--out {run_dir.name}.trials.parquet"
        )
    if not to_stdout and out_file is not None and out_file.exists() and not force:
        raise ExportError(f"{out_file} already exists. Fix: pass --force to replace it")
    data = export_bytes(run_dir, chosen)
    if to_stdout or out_file is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    write_export(data, out_file, run=run_dir, force=force)
    err.print(f"Wrote {out_file}", markup=False, highlight=False, soft_wrap=True)
