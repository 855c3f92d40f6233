"""A study: a plugin that brings an experiment and, through optional hooks, its own report
part, report sections and plots, ``pairbench study <name>`` commands, demo, scorer and test
double replies.

The built-in studies register exactly as a third party does (the ``pairbench.studies``
entry point names a :class:`Study`), and the core only ever calls these hooks: nothing
outside ``pairbench/studies/<name>/`` imports a study (as pytest's own features are plugins
of the hooks a third-party plugin implements).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from pairbench._errors import PairbenchError

if TYPE_CHECKING:
    import typer
    from pydantic import BaseModel

    from pairbench.report.view._doc import Figure, Omitted, Section
    from pairbench.store._run_dir import RunDir
    from pairbench.store._run_info import PriorSpend
    from pairbench.store._run_record import RunRecord
    from pairbench.store._table import TrialTable


@dataclass(frozen=True)
class ReviewNote:
    """A reviewer's note on one task or case (``manual_review.json`` ``notes``): it is shown
    beside the numbers and changes none."""

    by: str
    note: str


@dataclass(frozen=True)
class StudyRun:
    """What a study's report part reads: the run, as the core has loaded it."""

    run_dir: RunDir
    info: RunRecord
    """run.json as read back (``experiment_model`` holds the experiment as run)."""
    table: TrialTable
    """The trial table (``pairbench.store.load_table``): every final record and kept attempt."""
    notes: Mapping[str, ReviewNote]
    """``manual_review.json`` ``notes``, by task or case id; empty without the file."""


SummaryData: TypeAlias = Mapping[str, Any]
"""A whole ``summary.json`` as plain JSON data; a study's own part is at ``["study"]["data"]``."""


@dataclass(frozen=True)
class StudySection:
    """A report section a study adds, by the name ``report.sections`` lists it under.

    ``build`` gets the whole summary (``summary["study"]["data"]`` is the study's part, as
    JSON) and returns the section, or ``None`` when it has nothing to say in this run.
    """

    name: str
    build: Callable[[SummaryData], Section | None]


@dataclass(frozen=True)
class StudyPlot:
    """A plot a study adds: drawn from the summary, placed in the section named ``home``
    (one of the core's or the study's own)."""

    name: str
    home: str
    draw: Callable[[SummaryData], Figure | Omitted]


@dataclass(frozen=True)
class StudyReport:
    """A study's part of the report.

    ``build`` turns the run into the study's own typed record (``None``: nothing to add for
    this run); the core stores it in ``summary.json`` as ``study: {name, version, schema,
    data}`` (``data`` is ``model_dump(mode="json")``), and the study's ``sections`` and
    ``plots`` render it. ``files`` returns extra files written beside the report, from the
    stored data (``{"results.json": text}``), rebuilt byte for byte by ``verify``.

    **Usage**::

        REPORT = StudyReport(schema="acme.report/1", model=AcmePart, build=acme_part,
                             sections=(StudySection("acme", acme_section),))
    """

    schema: str
    """The id of the part's schema (bumped when a key is removed or re-typed)."""
    model: type[BaseModel]
    """The part's model: its ``SCHEMA.md`` is generated from it."""
    build: Callable[[StudyRun], BaseModel | None]
    sections: tuple[StudySection, ...] = ()
    plots: tuple[StudyPlot, ...] = ()
    files: Callable[[Mapping[str, Any]], Mapping[str, str]] | None = None

    @property
    def section_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sections)

    @property
    def plot_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.plots)


@dataclass(frozen=True)
class DemoRequest:
    """What ``pairbench demo --study <name>`` was asked for, handed to ``Study.demo``."""

    runs_dir: Path
    run_seed: int | None
    agent: str = "scripted"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    model_server: str = "none"
    """``none``, or ``local``: the local model (``pairbench model install``)."""


@dataclass(frozen=True)
class ScoredAnswer:
    """``Study.score``'s verdict on one raw answer: a table of what was scored, a label and
    why; ``parse_failure`` when the answer could not be read (not a zero score)."""

    parse_failure: bool
    label: str
    reason: str
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    """Cells as plain text: an answer's own text is never read as markup."""


class StudyDataMissing(Exception):
    """Raised by ``StudyReport.build`` when the run has nothing its sections can read; the
    message says why and what to change. The report then says so in place of the sections
    (``summary.study.missing``), instead of leaving them out silently."""


@dataclass(frozen=True)
class RunStart:
    """A run about to start, as ``Study.before_run`` sees it (nothing is made yet)."""

    loaded: Any
    """The ``LoadedExperiment``."""
    runs_dir: Path
    """The folder the run's folder will be made in (earlier runs are beside it)."""
    case_set: str | None
    """``calibration``, ``held-out`` or None (every task)."""


DoubleReply: TypeAlias = "tuple[str | None, list[dict[str, Any]]]"
"""A test double's reply: the message content and the tool calls."""


@dataclass(frozen=True)
class CliScript:
    """What the fake Claude Code and Codex CLIs (``pairbench.testing``) do with one of a
    study's prompts: call these MCP tools in order, say ``say`` before the last call, and
    answer ``answer(last tool result, parsed)`` (``{}`` when there are no calls).

    A study registers a function from the prompt to a ``CliScript``, or ``None`` when the
    prompt is not one of its own, under the ``pairbench.cli_scripts`` entry point (not a
    ``Study`` hook, so a fake CLI process loads only that light function, not every study).
    """

    calls: tuple[tuple[str, dict[str, Any]], ...]
    say: str
    answer: Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class Study:
    """Registered under the ``pairbench.studies`` entry point.

    **Usage**::

        STUDY = Study(name="mcp-transports", title="...", root=Path(__file__).parent / "study")
    """

    name: str
    title: str
    root: Path
    """Folder with ``experiment.yaml`` and every file it names (copied by ``pairbench init``)."""
    commands: tuple[tuple[str, str], ...] = ()
    """Programs the study's servers run that pairbench does not ship, each with how to
    install it: ``(name, install hint)``. ``pairbench demo`` looks for them first."""
    prepare: Callable[[Path], str] | None = None
    """Run by ``pairbench init`` (and the demo) on the copied folder, to make what the
    experiment needs beside it (a git repository, say); returns a line saying what it made."""
    bin_dirs: tuple[Path, ...] = ()
    """Folders the study's set-up installs its programs into (a checkout's pinned npm
    folder, say): put before ``PATH`` when a program is not on it."""
    version: str = "1"
    """The study plugin's version, recorded beside its report part."""
    report: StudyReport | None = None
    """Its report part, sections and plots (for runs whose experiment names the study)."""
    cli: Callable[[], typer.Typer] | None = None
    """Its commands, mounted as ``pairbench study <name> ...`` (loaded only when called)."""
    demo: Callable[[DemoRequest], None] | None = None
    """``pairbench demo --study <name>``; ``None``: the experiment is run as it is."""
    score: Callable[[str], ScoredAnswer] | None = None
    """``pairbench score --study <name> FILE``: one raw answer scored."""
    double: Callable[[Mapping[str, Any]], DoubleReply | None] | None = None
    """The test doubles' reply to a Chat Completions request body this study's agents send
    (``None``: not one of its requests), so the doubles know no study by name."""
    check: Callable[[Any], list[str]] | None = None
    """``pairbench check`` on an experiment naming the study: lines saying what its report
    will be able to show for this experiment and what will be missing, and why (given the
    ``LoadedExperiment``). Advice, never a problem: the exit code is the core's."""

    before_run: Callable[[RunStart], PriorSpend | None] | None = None
    """Called by ``pairbench run`` before the run's folder is made: raise ``PairbenchError``
    to refuse the run (nothing is made), or return spend made before it that counts against
    the same cost ceiling (run.json's ``prior_spend``, counted beside
    ``budget.prior_spend_usd``, on resume too)."""

    guarded: Callable[[Any], Mapping[str, Path]] | None = None
    """Files or folders outside the experiment's own that the study reads while a run scores
    (its built-in scenarios and their acceptance scripts, say), by label, given the
    ``LoadedExperiment``: hashed when the run starts and re-hashed around every attempt
    with the experiment's files; a change stops the run naming it."""

    def find_commands(self) -> dict[str, str]:
        """``PATH`` with what the study needs on it: unchanged when every program is already
        there; else with the first ``bin_dirs`` folder that has it in front.

        Raises ``PairbenchError`` naming the program and its install command when no folder
        has it, before any run starts (a missing server is not a trial's failure).
        """
        path = os.environ.get("PATH", os.defpath)
        for name, hint in self.commands:
            if shutil.which(name, path=path):
                continue
            found = next((d for d in self.bin_dirs if (d / name).is_file()), None)
            if found is None:
                raise PairbenchError(
                    f"study {self.name}: the program {name!r} is not installed (not on PATH). "
                    f"Fix: {hint}"
                )
            path = f"{found}{os.pathsep}{path}"
        return {"PATH": path}

    @property
    def experiment_path(self) -> Path:
        return self.root / "experiment.yaml"


def load_study(name: str) -> Study:
    """The study registered as ``name``; ``RegistryError`` lists the known names, and a
    registration that is not a :class:`Study` is a ``PairbenchError`` naming it."""
    from pairbench import _registry

    study = _registry.load("studies", name)
    if not isinstance(study, Study):
        raise PairbenchError(
            f"the registered study {name!r} is {study!r}, not a pairbench.Study; "
            "fix its pairbench.studies entry point"
        )
    return study


def registered_studies() -> list[Study]:
    """Every registered study that loads, by name (the test doubles ask each for replies)."""
    from pairbench import _registry

    found = []
    for name in _registry.names("studies"):
        try:
            found.append(load_study(name))
        except Exception:  # a broken plugin must not take the others' replies with it
            continue
    return found
