"""Reading a runtime-revision-ab run's per-scenario evidence for its report.

The trial table holds no grade details, so the ``revision`` sections read the result
files themselves: every final record under ``results/`` and every attempt kept under
``infra/``, with the transcript the journal names for each. Only runs whose results carry
``pairbench.rab-scenario/1`` evidence pay for it: the first graded record decides.

**Usage**::

    data = load_revision(RunDir.open(run_dir))   # the report part passes StudyRun.notes too
    data.cells[0].evidence.outcome   # "passed"
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairbench.store._events import AttemptFinished
from pairbench.store._load_run import _records
from pairbench.store._run_dir import RunDir
from pairbench.studies import ReviewNote

if TYPE_CHECKING:  # the study package is imported only for a run that has its evidence
    from pairbench.studies.runtime_revision_ab._evidence_models import ScenarioEvidence

EVIDENCE_SCHEMA = "pairbench.rab-scenario/1"
"""``grade.details["scenario"]["schema"]`` of a runtime-revision-ab scenario execution."""


@dataclass(frozen=True)
class Cell:
    """One scenario execution: a final record (``results/``) or a kept attempt (``infra/``)."""

    arm: str
    task: str
    pair: int
    """The trial index: the campaign pair."""
    attempt: int
    result_outcome: str
    """The record's own outcome (passed, failed, infra, ...)."""
    reason: str
    evidence: ScenarioEvidence | None
    """None when the record carries no evidence (an attempt that never reached grading)."""
    result_path: str
    """The result file, relative to the run folder."""
    transcript_path: str | None
    """The transcript the journal names for it; None when none was written."""


@dataclass(frozen=True)
class RevisionData:
    """Everything the revision sections read that the trial table does not hold."""

    cells: list[Cell]
    """Final records, in path order."""
    infra: list[Cell]
    """Attempts kept under ``infra/`` (replaced or not), in path order."""
    notes: Mapping[str, ReviewNote] = field(default_factory=dict)
    """Scenario label (or task id) -> review note."""
    windows: list[dict[str, Any]] = field(default_factory=list)
    """``proxy/interference.jsonl``: per attempt (label ``arm/task/trial#attempt``), the
    interference verdict around it and the host's load after it."""


def _evidence_dict(details: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    found = (details or {}).get("scenario")
    if isinstance(found, Mapping) and found.get("schema") == EVIDENCE_SCHEMA:
        return found
    return None


def _files(root: Path) -> Iterator[Path]:
    return iter(sorted(root.rglob("*.json"))) if root.is_dir() else iter(())


def _transcripts(run_dir: RunDir) -> dict[str, str | None]:
    """Result path -> transcript path, as the journal recorded them."""
    out: dict[str, str | None] = {}
    for event in run_dir.journal_events():
        if isinstance(event, AttemptFinished) and event.result is not None:
            out[event.result] = event.transcript
    return out


def _cells(run_dir: RunDir, folder: str, transcripts: Mapping[str, str | None]) -> list[Cell]:
    from pairbench.studies.runtime_revision_ab._evidence_models import ScenarioEvidence

    files = list(_files(run_dir.path / folder))
    records = _records(run_dir, folder)  # the same sorted order, validated
    out = []
    for path, record in zip(files, records, strict=True):
        raw = _evidence_dict(record.grade.details if record.grade else None)
        relative = path.relative_to(run_dir.path).as_posix()
        out.append(
            Cell(
                arm=record.arm,
                task=record.task,
                pair=record.trial,
                attempt=record.attempt,
                result_outcome=record.outcome,
                reason=record.reason,
                evidence=None if raw is None else ScenarioEvidence.model_validate(raw),
                result_path=relative,
                transcript_path=transcripts.get(relative),
            )
        )
    return out


def load_revision(run_dir: RunDir, notes: Mapping[str, ReviewNote] | None = None) -> RevisionData:
    """The run's final records and kept infra attempts with their evidence and traces."""
    transcripts = _transcripts(run_dir)
    return RevisionData(
        cells=_cells(run_dir, "results", transcripts),
        infra=_cells(run_dir, "infra", transcripts),
        notes=dict(notes or {}),
        windows=_windows(run_dir.path / "proxy" / "interference.jsonl"),
    )


def _windows(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    found = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue  # a torn last line of a killed run
        if isinstance(value, dict) and isinstance(value.get("label"), str):
            found.append(value)
    return found
