"""``pairbench import``: another harness's logs as a pairbench run folder."""

from __future__ import annotations

from pathlib import Path

import typer

from pairbench._errors import ImportRefused
from pairbench.cli._app import app, err, user_errors


def _options(raw: list[str], mapping: Path | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if mapping is not None:
        from pairbench.spec._yaml import load_yaml_with_lines

        data = load_yaml_with_lines(mapping).data
        if not isinstance(data, dict):
            raise ImportRefused(f"{mapping}: a mapping file holds KEY: COLUMN lines")
        out.update({str(k): v for k, v in data.items()})
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep:
            raise ImportRefused(f"--option {item!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


@app.command("import")
@user_errors
def import_(
    fmt: str = typer.Argument(
        ..., help="The importer: inspect, lm-eval, promptfoo, table (or a plugin's name)."
    ),
    files: list[Path] = typer.Argument(..., help="The harness's output files."),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where the run folder goes."),
    option: list[str] = typer.Option(
        [], "--option", "-o", help="KEY=VALUE for the importer (a table's column mapping)."
    ),
    mapping: Path | None = typer.Option(None, "--mapping", help="The same keys as a YAML file."),
    arm: list[str] = typer.Option([], "--arm", help="Arm names, one per file's arm, in order."),
    experiment: Path | None = typer.Option(
        None,
        "--experiment",
        help="A frozen analysis (pairbench freeze-analysis): arms, metric, primary test.",
    ),
    allow_different_inputs: bool = typer.Option(
        False,
        "--allow-different-inputs",
        help="Import logs whose task, version or inputs differ (the report leads with it).",
    ),
) -> None:
    """Import trials another harness ran (Inspect AI, a per-sample table, ...) as a run.

    Samples are paired on (sample id, epoch); samples in one arm only are listed and
    excluded; logs of different tasks, versions or inputs are refused unless
    --allow-different-inputs. report, compare, view, export and verify then work on the run.

    Example:

        pairbench import inspect a.eval b.eval --runs-dir runs
        pairbench import table results.csv -o id=question -o arm=model -o outcome=correct
        pairbench import inspect base.eval cand.eval --experiment analysis.yaml
    """
    from pairbench.importers._api import import_logs

    run = import_logs(
        fmt,
        files,
        runs_dir,
        options=_options(option, mapping),
        arm_names=arm,
        allow_different_inputs=allow_different_inputs,
        experiment=experiment,
    )
    err.print(f"Imported into {run}", markup=False, highlight=False, soft_wrap=True)
    print(run)


@app.command("freeze-analysis")
@user_errors
def freeze_analysis_(
    analysis: Path = typer.Argument(..., help="The analysis file (analysis.yaml)."),
) -> None:
    """Freeze an import's analysis before the logs it analyses exist.

    Writes ANALYSIS.lock.json beside it and appends a freeze line (with the time) to
    ANALYSIS.ledger.jsonl; commit both. `pairbench import ... --experiment ANALYSIS` then
    refuses an analysis edited since, and the report says for each log whether it was
    created before or after this freeze and whether it was named in advance.

    Example:

        pairbench freeze-analysis analysis.yaml
    """
    from pairbench.importers._analysis import freeze_analysis

    entry = freeze_analysis(analysis)
    err.print(
        f"Frozen {analysis} (version {entry.protocol_version}) at {entry.at}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
