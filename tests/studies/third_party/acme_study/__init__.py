"""A third party's study, written as an outsider would: its own package, registered through
the ``pairbench.studies`` entry point, using only pairbench's public API.

It adds a report section (``acme-lengths``) and a plot (``acme-bars``) built from its own
report part, a ``pairbench study acme-study hello`` command, a scorer, and its agent's reply
for the test doubles (a prompt that says ``ACME-GREETING``): the Chat Completions double's
reply (``Study.double``) and the fake Claude Code and Codex CLIs' script (``cli_script``,
under the ``pairbench.cli_scripts`` entry point).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel, ConfigDict

from pairbench import (
    CliScript,
    ScoredAnswer,
    Study,
    StudyPlot,
    StudyReport,
    StudyRun,
    StudySection,
    load_run,
)
from pairbench.report import Figure, Omitted, Section, Table

GREETING = "ACME-GREETING"
REPLY = "acme says hello"


def cli_script(prompt: str) -> CliScript | None:
    """The fake CLIs' behaviour for the study's prompt: no tool calls, the greeting."""
    return CliScript((), "", lambda _result: REPLY) if GREETING in prompt else None


class Lengths(BaseModel):
    """The study's part: each arm's final answers' lengths, in characters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lengths: dict[str, list[int]]
    notes: dict[str, str]


def build(run: StudyRun) -> Lengths:
    loaded = load_run(run.run_dir.path)
    lengths: dict[str, list[int]] = {}
    for result in loaded.results:
        lengths.setdefault(result.arm, []).append(len(result.final_answer or ""))
    notes = {key: f"{n.note} ({n.by})" for key, n in run.notes.items()}
    return Lengths(lengths={a: sorted(v) for a, v in sorted(lengths.items())}, notes=notes)


def _part(s: Mapping[str, Any]) -> Mapping[str, Any]:
    return s["study"]["data"] or {"lengths": {}, "notes": {}}


def section(s: Mapping[str, Any]) -> Section | None:
    part = _part(s)
    if not part["lengths"]:
        return None
    rows = [[arm, str(len(v)), str(sum(v))] for arm, v in part["lengths"].items()]
    return Section("Acme answer lengths", [Table(["Arm", "Answers", "Characters"], rows)])


def bars(s: Mapping[str, Any]) -> Figure | Omitted:
    part = _part(s)
    if not part["lengths"]:
        return Omitted("acme-bars", "no answers")
    totals = {arm: sum(v) for arm, v in part["lengths"].items()}
    top = max(totals.values()) or 1
    rects = "".join(
        f'<rect x="10" y="{10 + 20 * i}" width="{200 * t // top}" height="14"/>'
        f'<text x="215" y="{21 + 20 * i}">{html.escape(arm)}</text>'
        for i, (arm, t) in enumerate(totals.items())
    )
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="300" height="80">{rects}</svg>'
    numbers = Table(["Arm", "Characters"], [[a, str(t)] for a, t in totals.items()])
    return Figure("acme-bars", "Acme: characters per arm", svg, "Characters per arm.", numbers)


def files(data: Mapping[str, Any]) -> dict[str, str]:
    return {"acme.json": json.dumps(data["lengths"], sort_keys=True) + "\n"}


def hello(name: str = typer.Option("world", help="Who to greet.")) -> None:
    """Greet someone, the acme way.

    Example:

        pairbench study acme-study hello --name team
    """
    typer.echo(f"acme: hello {name}")


def commands() -> typer.Typer:
    cli = typer.Typer(help="Acme's own commands.", no_args_is_help=True)
    cli.command()(hello)
    return cli


def score(raw: str) -> ScoredAnswer:
    if not raw.strip():
        return ScoredAnswer(parse_failure=True, label="parse failure", reason="empty answer")
    correct = REPLY in raw
    return ScoredAnswer(
        parse_failure=False,
        label="1/1" if correct else "0/1",
        reason="the greeting" if correct else "no greeting",
        headers=("field", "expected", "got"),
        rows=(("greeting", REPLY, raw.strip()),),
    )


def double(body: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]]] | None:
    """The acme agent's reply: the greeting, to a prompt that carries ``ACME-GREETING``."""
    prompt = " ".join(
        str(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user"
    )
    return (REPLY, []) if GREETING in prompt else None


STUDY = Study(
    name="acme-study",
    title="Acme's own study: does the greeting arm greet?",
    root=Path(__file__).parent / "study",
    version="0.1.0",
    report=StudyReport(
        schema="acme.lengths/1",
        model=Lengths,
        build=build,
        sections=(StudySection("acme-lengths", section),),
        plots=(StudyPlot("acme-bars", "acme-lengths", bars),),
        files=files,
    ),
    cli=commands,
    score=score,
    double=double,
)
