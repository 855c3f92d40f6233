"""One trial with every attempt it had (the list of trials is ``_listing.py``'s).

A trial's page reads only that trial's files: its result, its kept attempts under
``infra/`` and ``interrupted/``, their transcripts, the transcript of an attempt still
running (``<trial>.<attempt>.partial``) and each attempt's fixture audit log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from pairbench.schedule._plan import TrialKey
from pairbench.store._records import Metric, TrialResult, first_error
from pairbench.store._run_record import RunRecord
from pairbench.view._paths import NotFound, is_segment, run_file
from pairbench.view._timeline import AuditLog, Timeline, pretty, read_audit_logs, read_timeline

KEPT = ("infra", "interrupted")
"""The folders of attempts kept beside a trial's final one."""
_ATTEMPT_FILE = re.compile(r"^(?P<trial>\d+)\.(?P<attempt>\d+)\.(?P<ext>json|jsonl|partial)$")


class MetricRow(NamedTuple):
    """One metric of an attempt, as the trial page lists it."""

    name: str
    value: str
    note: str
    """Its provenance and who measured or estimated it, or why it is missing."""


class CallRow(NamedTuple):
    """One tool call of an attempt, as the harness timed it."""

    tool: str
    client_ms: str
    server_ms: str
    error: str


@dataclass(frozen=True)
class Attempt:
    """One attempt of a trial, with everything the run kept of it."""

    kind: str
    """``final``, ``infra``, ``interrupted`` or ``running`` (no record yet)."""
    attempt: int | None
    result: TrialResult | None
    record: str | None
    """The record's path, relative to the run folder."""
    facts: list[tuple[str, str]] = field(default_factory=list)
    grade_details: str | None = None
    metrics: list[MetricRow] = field(default_factory=list)
    tool_calls: list[CallRow] = field(default_factory=list)
    timeline: Timeline | None = None
    audit: list[AuditLog] = field(default_factory=list)
    error: str | None = None
    """Why the record could not be read."""


@dataclass(frozen=True)
class TrialPage:
    """A trial: its final attempt first, then every attempt kept beside it."""

    arm: str
    task: str
    trial: int
    attempts: list[Attempt]
    planned: bool
    """Whether the schedule plans this trial (a planned trial may have no record yet)."""


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:,.3f}".rstrip("0").rstrip(".")


def _metric_row(name: str, metric: Metric) -> MetricRow:
    note = metric.source or metric.estimator or metric.reason
    return MetricRow(
        name, _number(metric.value), f"{metric.provenance}: {note}" if note else metric.provenance
    )


def _metric_rows(r: TrialResult) -> list[MetricRow]:
    """Every metric of the record, the per-server and per-tool ones by key."""
    if r.metrics is None:
        return []
    rows = []
    for name, value in r.metrics:
        if isinstance(value, Metric):
            rows.append(_metric_row(name, value))
        elif isinstance(value, dict) and all(isinstance(v, Metric) for v in value.values()):
            rows += [_metric_row(f"{name}[{key}]", metric) for key, metric in value.items()]
        elif name in ("transport_failures", "transport_failure_kinds"):
            rows.append(MetricRow(name, str(value), ""))
    return rows


def _facts(r: TrialResult) -> list[tuple[str, str]]:
    def text(value: Any) -> str:
        if value is None or value == "":
            return "—"
        # One line of JSON: a record's small parts read best at a glance (the answer and
        # the reason are strings, shown as they are, newlines kept).
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)

    return [
        ("outcome", r.outcome),
        ("reason", text(r.reason)),
        ("attempt", str(r.attempt)),
        ("agent", text(r.agent) + (" (simulated)" if r.simulated else "")),
        ("started", text(r.started_at)),
        ("ended", text(r.ended_at)),
        ("start order", str(r.start_order)),
        ("seed", str(r.seed)),
        ("model seed", str(r.model_seed)),
        ("labels", text(r.labels)),
        ("final answer", text(r.final_answer)),
        ("grade", text(r.grade.outcome if r.grade else None)),
        ("grade reason", text(r.grade.reason if r.grade else None)),
        ("validity", text(r.validity.model_dump() if r.validity else None)),
        ("security", text(r.security.model_dump() if r.security else None)),
        ("seeding", text(r.seeding.model_dump() if r.seeding else None)),
        ("models seen", ", ".join(r.models_seen) or "—"),
        ("servers", text({k: v.model_dump() for k, v in r.servers.items()} or None)),
        ("transcript sha256", text(r.transcript_sha256)),
        ("workspace", r.workspace.summary() if r.workspace else "every file kept"),
    ]


class _Read(NamedTuple):
    result: TrialResult | None
    error: str | None
    """Why the record could not be read (one line, as ``load_run`` would say it)."""


def _read_record(path: Path | None) -> _Read:
    if path is None:
        return _Read(None, None)
    try:
        return _Read(TrialResult.model_validate_json(path.read_bytes()), None)
    except ValidationError as exc:
        return _Read(None, f"{path.name}: not a readable pairbench record ({first_error(exc)})")
    except OSError as exc:
        return _Read(None, f"{path.name}: cannot read it ({exc.strerror or exc})")


def _attempt(
    run: Path, key: TrialKey, kind: str, record: Path | None, transcript: Path | None
) -> Attempt:
    """One attempt of trial ``key``; ``record`` or ``transcript`` may be missing."""
    result, error = _read_record(record)
    number = result.attempt if result is not None else None
    if number is None and transcript is not None:
        found = _ATTEMPT_FILE.match(transcript.name)
        number = int(found["attempt"]) if found else None
    fixture = (
        run_file(run, "fixtures", key.arm, key.task, f"{key.trial}.{number}") if number else None
    )
    calls = result.metrics.tool_calls if result and result.metrics else []
    return Attempt(
        kind=kind,
        attempt=number,
        result=result,
        record=record.relative_to(run).as_posix() if record is not None else None,
        facts=_facts(result) if result else [],
        grade_details=pretty(result.grade.details) if result and result.grade else None,
        metrics=_metric_rows(result) if result else [],
        tool_calls=[
            CallRow(
                f"{c.server}.{c.tool}" if c.server else c.tool,
                _number(c.client_ms),
                _number(c.server_ms),
                "error" if c.is_error else "",
            )
            for c in calls
        ],
        timeline=(
            read_timeline(run, transcript, partial=kind == "running")
            if transcript is not None and transcript.is_file()
            else None
        ),
        audit=read_audit_logs(run, fixture),
        error=error,
    )


def _scheduled(info: RunRecord, task: str, trial: int, arm: str) -> bool:
    schedule = info.schedule
    pairs = schedule.get("pairs", []) if isinstance(schedule, dict) else []
    return any(
        isinstance(p, dict) and p.get("task") == task and p.get("trial") == trial
        and arm in (p.get("order") or [])
        for p in pairs if isinstance(pairs, list)
    )  # fmt: skip


def trial_page(run: Path, arm: str, task: str, trial: int, info: RunRecord) -> TrialPage:
    """Every attempt of (arm, task, trial) the run holds, each transcript's first part;
    ``NotFound`` if it has none and the schedule (in ``info``) does not plan it."""
    if not (is_segment(arm) and is_segment(task)):
        raise NotFound("not a trial of this run")
    key = TrialKey(arm=arm, task=task, trial=trial)
    attempts: list[Attempt] = []
    final = run_file(run, "results", arm, task, f"{trial}.json")
    if final is not None and final.is_file():
        transcript = run_file(run, "transcripts", arm, task, f"{trial}.jsonl")
        attempts.append(_attempt(run, key, "final", final, transcript))
    for kind in KEPT:
        files = _numbered(run_file(run, kind, arm, task), trial)
        for number in sorted({n for n, _ in files}):
            attempts.append(
                _attempt(run, key, kind, files.get((number, "json")), files.get((number, "jsonl")))
            )
    live = _numbered(run_file(run, "transcripts", arm, task), trial)
    for (_, ext), path in sorted(live.items()):
        if ext == "partial":
            attempts.append(_attempt(run, key, "running", None, path))
    planned = _scheduled(info, task, trial, arm)
    if not attempts and not planned:
        raise NotFound(f"no trial {arm}/{task}/{trial} in run {info.run_id}")
    return TrialPage(arm, task, trial, attempts, planned)


TRANSCRIPT_KINDS = ("final", *KEPT, "running")


def transcript_part(
    run: Path, arm: str, task: str, trial: int, query: Mapping[str, str]
) -> Timeline:
    """The part of one attempt's transcript a "show more" link asks for: ``kind`` (final,
    infra, interrupted, running), ``attempt``, ``offset`` (a byte a part before ended at)
    and ``t`` (the time of the event before it). ``NotFound`` for anything else."""
    kind, raw_attempt = query.get("kind", ""), query.get("attempt", "")
    raw_offset, raw_t = query.get("offset", "0") or "0", query.get("t", "")
    if kind not in TRANSCRIPT_KINDS or not raw_attempt.isdigit() or not raw_offset.isdigit():
        raise NotFound("no such part of a transcript: kind, attempt and offset name one")
    if len(raw_attempt) > 9 or len(raw_offset) > 15:
        raise NotFound("no such part of a transcript")
    try:
        previous = float(raw_t) if raw_t else None
    except ValueError:
        previous = None
    attempt, offset = int(raw_attempt), int(raw_offset)
    name = {
        "final": f"{trial}.jsonl",
        "running": f"{trial}.{attempt}.partial",
    }.get(kind, f"{trial}.{attempt}.jsonl")
    folder = "transcripts" if kind in ("final", "running") else kind
    path = run_file(run, folder, arm, task, name)
    if path is None or not path.is_file():
        raise NotFound(f"no transcript {folder}/{arm}/{task}/{name} in this run")
    if kind == "final":  # the final transcript is its attempt's only if the record says so
        result = _read_record(run_file(run, "results", arm, task, f"{trial}.json")).result
        if result is None or result.attempt != attempt:
            raise NotFound(f"attempt {attempt} is not the final attempt of this trial")
    if offset > path.stat().st_size:
        raise NotFound(f"offset {offset} is past the end of {folder}/{arm}/{task}/{name}")
    timeline = read_timeline(run, path, partial=kind == "running", offset=offset, previous=previous)
    if timeline is None:
        raise NotFound(f"cannot read {folder}/{arm}/{task}/{name}")
    return timeline


def _numbered(folder: Path | None, trial: int) -> dict[tuple[int, str], Path]:
    """``<trial>.<attempt>.<ext>`` files in ``folder``, by (attempt, ext)."""
    if folder is None or not folder.is_dir():
        return {}
    found = {}
    for path in folder.iterdir():
        match = _ATTEMPT_FILE.match(path.name)
        if match and int(match["trial"]) == trial and path.is_file():
            found[(int(match["attempt"]), match["ext"])] = path
    return found
