"""Run folders for the view's tests: real tiny runs, and written ones with every part a page
shows (kept attempts, audit logs, a live attempt) and hostile text in every agent field.

Written runs use the store's own models and writers (``TrialResult``, ``Journal``,
``trial_row``), so they are what the runner writes, not a guess at its format.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pairbench import start_run
from pairbench.spec._server_identity import ServerIdentity
from pairbench.store._events import AttemptFinished, AttemptStarted, RunEnded, RunStarted
from pairbench.store._journal import Journal
from pairbench.store._records import (
    Grade,
    Metric,
    Metrics,
    Outcome,
    Security,
    ToolCallTiming,
    TrialResult,
    Validity,
)
from pairbench.store._row import trial_row

PAYLOADS = (
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=1">',
    "javascript:window.__xss=1",
    "</style><script>window.__xss=1</script>",
    '"><svg onload="alert(1)">',
)
"""What a hostile agent writes: each sets ``window.__xss`` or opens a dialog if it ever runs."""
XSS = " ".join(PAYLOADS)
PORT = 8765
"""The port an in-process app (``TestClient``, no socket) is told it serves."""

EXPERIMENT = """id: tiny
version: "1"
trials: 2
agent:
  adapter: command
  settings: {command: [python3, -c, "import sys; sys.stdin.read(); print('ok')"]}
arms: {a: {}, b: {}}
tasks:
  - {id: t, prompt: p.md, grader: {name: exact-answer, args: {expect: ok}}}
"""
"""A real experiment that runs in half a second: a command agent answering ``ok``."""


def write_summary(run: Path) -> None:
    """summary.json of ``run``, built as ``pairbench report`` builds it (few resamples, so
    fast). Only the summary: it is all the view reads, and it renders the page itself."""
    from pairbench.report._write import summary_json
    from pairbench.report.summary._build import summarize
    from pairbench.store._load_table import load_table

    table = load_table(run, use_cache=False)
    summary = summarize(
        table.info, table.table, bootstrap_reps=20, journal_head=table.run_dir.journal_head()
    )
    (run / "summary.json").write_text(summary_json(summary), encoding="utf-8")


def tiny_runs(root: Path, runs: Path, count: int = 2) -> list[Path]:
    """``count`` real runs of :data:`EXPERIMENT` (same seed: a valid comparison), the first
    with its summary written."""
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    (root / "experiment.yaml").write_text(EXPERIMENT, encoding="utf-8")
    made = [start_run(root / "experiment.yaml", runs, run_seed=7).run_dir for _ in range(count)]
    write_summary(made[0])
    return made


@dataclass(frozen=True)
class Written:
    """A written run: where it is and the trial every part of a trial page is in."""

    path: Path
    rich_trial: str
    """``arm/task/trial`` of the trial with a kept infra attempt, tool calls and an audit log."""

    @property
    def run_id(self) -> str:
        return self.path.name


def _transcript(text: str) -> list[dict[str, object]]:
    return [
        {"t": 0.001, "kind": "agent_start", "agent": "scripted", "arm": "a"},
        {"t": 0.2, "kind": "mcp_connect", "server": "tracker", "transport": "stdio", "ms": 180.0,
         "ok": True, "tools": ["get", text]},
        {"t": 0.25, "kind": "message", "text": text},
        {"t": 0.3, "kind": "tool_call", "id": "c1", "server": "tracker", "tool": "get",
         "arguments": {"query": text, "nested": {"x": text}}},
        {"t": 0.342, "kind": "tool_result", "id": "c1", "server": "tracker", "tool": "get",
         "is_error": False, "text": text, "client_ms": 42.0},
        {"t": 0.35, "kind": "tool_call", "id": "c2", "server": "tracker", "tool": text,
         "arguments": {text: text}},
        {"t": 0.36, "kind": "tool_result", "id": "c2", "server": "tracker", "tool": text,
         "is_error": True, "text": text, "client_ms": 10.0},
        {"t": 0.4, "kind": "warning", "message": text},
        {"t": 0.41, "kind": "error", "message": text},
        {"t": 0.42, "kind": text, "line": text},
        {"t": 0.5, "kind": "final", "text": text},
    ]  # fmt: skip


def _result(
    run_id: str, arm: str, task: str, trial: int, outcome: str, attempt: int, text: str
) -> TrialResult:
    measured = Metric.measured
    missing = Metric.missing(f"not reported {text}")
    graded = outcome in ("passed", "failed")
    return TrialResult(
        run_id=run_id,
        experiment="hostile",
        arm=arm,
        task=task,
        trial=trial,
        labels={"tier": 1, "note": text},
        seed=100 + trial,
        model_seed=7,
        attempt=attempt,
        start_order=0 if arm == "a" else 1,
        outcome=cast(Outcome, outcome),
        reason=f"reason {text}",
        agent="scripted",
        started_at="2026-12-01T10:00:00+00:00",
        ended_at="2026-12-01T10:00:01+00:00",
        grade=Grade(
            outcome="passed" if outcome == "passed" else "failed",
            reason=text,
            details={"expected": text, text: [text]},
        )
        if graded
        else None,
        metrics=Metrics(
            wall_ms=measured(500.0 + trial, "pairbench client clock"),
            connect_ms={"tracker": measured(180.0, "clock")},
            tool_calls=[
                ToolCallTiming(server="tracker", tool="get", client_ms=42.0, server_ms=0.5),
                ToolCallTiming(server=text, tool=text, client_ms=10.0, is_error=True),
            ],
            cold_start_ms=measured(32.0, "clock"),
            turns=measured(3, text),
            input_tokens=missing,
            output_tokens=missing,
            cost_usd=missing,
        ),
        validity=Validity(valid=trial % 2 == 0, off_surface=[] if trial % 2 == 0 else [text]),
        security=Security(secret_locations=[text], token_shaped_in_output=False),
        final_answer=f"answer {text}",
        models_seen=[text],
        servers={
            "tracker": ServerIdentity(name=text, version=text, tools_sha256="0" * 64, tools=[text])
        },
    )


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _write_lines(path: Path, lines: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _run_json(run_id: str, text: str, seed: int) -> dict[str, object]:
    pairs = [
        {"index": i, "task": task, "trial": trial, "seed": 100 + trial, "model_seed": 7,
         "order": ["a", "b"]}
        for i, (task, trial) in enumerate((t, n) for t in ("t1", "t2") for n in range(2))
    ]  # fmt: skip
    return {
        "schema_id": "pairbench.run/2",
        "run_id": run_id,
        "experiment": {"id": "hostile", "version": "1", "description": f"description {text}"},
        "experiment_model": {"id": "hostile", "notes": text},
        "arms": ["a", "b"],
        "comparisons": [["a", "b"]],
        "tasks": [{"id": "t1", "labels": {"tier": 1, "note": text}}, {"id": "t2", "labels": {}}],
        "agents": {"a": {"adapter": "scripted", "settings": {"note": text}}, "b": None},
        "identities": {"arms": {"a": {"agent": text}}, "sources": {}},
        "agent_simulated": False,
        "run_seed": seed,
        "order_policy": "alternate",
        "concurrency": 1,
        "schedule": {"experiment": "hostile", "run_seed": seed, "order_policy": "alternate",
                     "pairs": pairs},
        "planned_trials": 8,
        "policies": {"budget": {"trial_timeout_s": 60}, "infra": {}},
        "started_at": "2026-12-01T10:00:00+00:00",
    }  # fmt: skip


def _attempts(run_id: str, text: str) -> Iterator[tuple[str, TrialResult]]:
    """(folder, record) of every attempt: ``results``, ``infra`` or ``interrupted``."""
    for task in ("t1", "t2"):
        for trial in range(2):
            for arm in ("a", "b"):
                attempt = 1
                if (arm, task, trial) == ("b", "t1", 0):
                    yield "infra", _result(run_id, arm, task, trial, "infra", 1, text)
                    attempt = 2
                if (arm, task, trial) == ("a", "t2", 1):
                    yield "interrupted", _result(run_id, arm, task, trial, "interrupted", 1, text)
                    attempt = 2
                outcome = "passed" if (trial + (arm == "b")) % 2 == 0 else "failed"
                if (arm, task, trial) == ("b", "t2", 1):
                    outcome = "agent_error"
                yield "results", _result(run_id, arm, task, trial, outcome, attempt, text)


def write_run(
    runs: Path, run_id: str, *, text: str = XSS, live: bool = False, seed: int = 3
) -> Written:
    """A run folder with two arms (a, b), two tasks (t1, t2) and two trials each, ``text``
    in every field an agent or a server writes, kept infra and interrupted attempts, tool
    calls and fixture audit logs. ``live``: no end in the journal, one attempt in flight
    (its transcript still ``.partial``) and no summary; otherwise ended, with summary.json.
    """
    path = runs / run_id
    path.mkdir(parents=True)
    run_json = path / "run.json"
    run_json.write_text(json.dumps(_run_json(run_id, text, seed), indent=2) + "\n", "utf-8")
    journal = Journal(path / "journal.jsonl", hashlib.sha256(run_json.read_bytes()).hexdigest())
    journal.append(RunStarted(run_id=run_id, planned=8))
    for folder, r in _attempts(run_id, text):
        if live and (r.arm, r.task, r.trial) == ("b", "t2", 1):
            continue  # in flight: started, transcript streaming, no record yet
        key = f"{r.arm}/{r.task}/{r.trial}"
        stem = f"{r.trial}.{r.attempt}" if folder != "results" else str(r.trial)
        record = f"{folder}/{r.arm}/{r.task}/{stem}.json"
        transcript = (
            f"{folder}/{r.arm}/{r.task}/{stem}.jsonl"
            if folder != "results"
            else f"transcripts/{r.arm}/{r.task}/{r.trial}.jsonl"
        )
        _write_json(path / record, r.model_dump(mode="json"))
        _write_lines(path / transcript, _transcript(text))
        _write_lines(
            path / "fixtures" / r.arm / r.task / f"{r.trial}.{r.attempt}" / "audit.jsonl",
            [
                {"tool": "get", "arguments": {"query": text}, "ok": True, "server_ms": 0.5},
                {"tool": text, "arguments": {text: text}, "ok": False, "error": text,
                 "server_ms": 0.25},
            ],
        )  # fmt: skip
        journal.append(AttemptStarted(key=key, attempt=r.attempt))
        journal.append(
            AttemptFinished(
                key=key,
                attempt=r.attempt,
                outcome=r.outcome,
                result=record,
                transcript=transcript,
                row=trial_row(r, kept=folder != "results"),
            )
        )
    if live:
        journal.append(AttemptStarted(key="b/t2/1", attempt=1))
        _write_lines(path / "transcripts/b/t2/1.1.partial", _transcript(text)[:4])
    else:
        journal.append(RunEnded(status="complete"))
    journal.close()
    if not live:
        write_summary(path)
    return Written(path, "b/t1/0")


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and modification time under ``folder``, and every folder's time
    (a file made and removed again, say a lock or a temporary file, changes it)."""
    out: dict[str, tuple[bytes, int]] = {}
    for dirpath, _dirnames, filenames in os.walk(folder):
        base = Path(dirpath)
        out[base.relative_to(folder).as_posix() + "/"] = (b"", base.stat().st_mtime_ns)
        for name in filenames:
            file = base / name
            out[file.relative_to(folder).as_posix()] = (file.read_bytes(), file.stat().st_mtime_ns)
    return out


@dataclass(frozen=True)
class ViewRuns:
    """A RUNS_DIR with every kind of run the view shows."""

    runs: Path
    tiny: list[str]
    """Two real runs of one experiment and seed (a valid comparison); the first has its
    summary.json, the second none."""
    hostile: Written
    """A written, ended run with hostile text everywhere, kept attempts and a summary."""
    live: Written
    """A written run in progress: no end, an attempt in flight, no summary."""


def build_view_runs(root: Path) -> ViewRuns:
    """Every run :class:`ViewRuns` names, under ``root / "runs"``."""
    runs = root / "runs"
    tiny = tiny_runs(root, runs)
    hostile = write_run(runs, "hostile-20261201T100000Z-aaaaaa")
    live = write_run(runs, "hostile-20261201T110000Z-bbbbbb", live=True, text="live text")
    return ViewRuns(runs, [p.name for p in tiny], hostile, live)
