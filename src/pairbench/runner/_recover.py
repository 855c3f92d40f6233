"""Resume's bookkeeping: what the journal and the stored records say was done."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pairbench._atomic import sha256_file
from pairbench.runner._run import RunState, planned_keys
from pairbench.schedule._plan import Schedule, TrialKey
from pairbench.store._events import AttemptFinished, AttemptStarted
from pairbench.store._journal import Journal
from pairbench.store._records import FINAL_OUTCOMES, TrialResult
from pairbench.store._row import trial_row
from pairbench.store._run_dir import RunDir


def recover_state(run_dir: RunDir, schedule: Schedule) -> RunState:
    """Rebuild bookkeeping from the journal and the result files.

    A crash inside a commit can leave records placed but not journaled (the journal line is
    written last): final results, kept infra or interrupted attempts, ``not_run`` records.
    They are whole (fsynced before being placed), so they are journaled now, by name, and
    count as what they are; an attempt that left no record is kept as ``interrupted``.
    The spend starts from every stored record's cost (``results/``, ``infra/``,
    ``interrupted/``), as the cost ceiling counted them when they were written.
    """
    state = RunState()
    events = run_dir.journal_events()
    started: dict[str, int] = {}
    finished: set[tuple[str, int]] = set()
    journaled: set[str] = set()
    for event in events:
        if isinstance(event, AttemptStarted):
            started[event.key] = max(started.get(event.key, 0), event.attempt)
        elif isinstance(event, AttemptFinished):
            finished.add((event.key, event.attempt))
            journaled.update(f for f in (event.result, event.transcript) if f)
            if event.outcome == "infra":
                state.infra[TrialKey.model_validate(_split(event.key))] += 1
    for folder in ("results", "infra", "interrupted"):
        root = run_dir.path / folder
        for tmp in sorted(root.rglob(".*.tmp")) if root.is_dir() else []:
            # A commit's temporary file that a crash left behind: never a record (records
            # are linked under their own names), and verify would flag it forever.
            tmp.unlink()
    journal = run_dir.journal()
    try:
        for kept in _unjournaled_kept(run_dir, journaled):
            key = TrialKey(arm=kept.arm, task=kept.task, trial=kept.trial)
            kind = "infra" if kept.outcome == "infra" else "interrupted"
            _journal_record(journal, run_dir, kept, run_dir.kept_path(kind, key, kept.attempt, ""))
            finished.add((key.label, kept.attempt))
            if kept.outcome == "infra":
                state.infra[key] += 1
        # Attempt numbers move on past every recorded attempt, started line or not.
        for label, attempt in finished:
            started[label] = max(started.get(label, 0), attempt)
        for kept in [*run_dir.infra_attempts(), *run_dir.interrupted_attempts()]:
            state.spend.add(kept)
        for key, _pair in planned_keys(schedule):
            state.attempts[key] = started.get(key.label, 0)
            last = state.attempts[key]
            if run_dir.has_result(key):
                result = TrialResult.model_validate_json(run_dir.result_path(key).read_bytes())
                state.spend.add(result)
                if result.outcome in FINAL_OUTCOMES:
                    state.done.add(key)
                if _rel(run_dir, run_dir.result_path(key)) not in journaled:
                    _journal_record(journal, run_dir, result, None)
                continue
            if last and (key.label, last) not in finished:
                _keep_interrupted(journal, run_dir, key, last)
    finally:
        journal.close()
    return state


def _rel(run_dir: RunDir, path: Path) -> str:
    return str(path.relative_to(run_dir.path))


def _unjournaled_kept(run_dir: RunDir, journaled: set[str]) -> list[TrialResult]:
    """Kept attempt records (``infra/``, ``interrupted/``) that no journal line names."""
    out = []
    for kind in ("infra", "interrupted"):
        root = run_dir.path / kind
        for path in sorted(root.rglob("*.json")) if root.is_dir() else []:
            if _rel(run_dir, path) not in journaled:
                out.append(TrialResult.model_validate_json(path.read_bytes()))
    return out


def _keep_interrupted(journal: Journal, run_dir: RunDir, key: TrialKey, last: int) -> None:
    """The runner died mid-attempt (SIGKILL, power cut): keep what it left as interrupted.

    Nothing is deleted and the attempt number moves on. A transcript in its final place
    (or in ``infra/``) with no record is this attempt's: the runner died between the
    renames of its commit, and the next attempt would replace it, so it is kept with the
    attempt, as the working one is. Moved first, then journaled by name, so ``verify``
    knows the kept file (a crash in between finds it at its kept path next time).
    """
    target = run_dir.kept_path("interrupted", key, last, ".jsonl")
    candidates = (
        run_dir.working_transcript(key, last),
        run_dir.transcript_path(key),
        run_dir.kept_path("infra", key, last, ".jsonl"),
    )
    left = next((p for p in candidates if p.exists()), None)
    if left is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        left.replace(target)
    kept = target.is_file()
    journal.append(
        AttemptFinished(
            key=key.label,
            attempt=last,
            outcome="interrupted",
            transcript=_rel(run_dir, target) if kept else None,
            transcript_sha256=sha256_file(target) if kept else None,
            reason="the runner stopped before the attempt finished",
        )
    )


def _journal_record(
    journal: Journal, run_dir: RunDir, result: TrialResult, kept_stem: Path | None
) -> None:
    """Journal a record the runner placed but did not journal (it died in between).

    The group commit fsyncs a record before placing it, so a placed record is whole: it
    stays (records are never overwritten), and its line is written now. ``kept_stem`` is
    the kept attempt's path without suffix (``infra/a/t/0.1``), None for a final result.
    """
    key = TrialKey(arm=result.arm, task=result.task, trial=result.trial)
    if kept_stem is None:
        path, transcript = run_dir.result_path(key), run_dir.transcript_path(key)
    else:
        path = kept_stem.with_name(kept_stem.name + ".json")
        transcript = kept_stem.with_name(kept_stem.name + ".jsonl")
    has_transcript = transcript.is_file()
    journal.append(
        AttemptFinished(
            key=key.label,
            attempt=result.attempt,
            outcome=result.outcome,
            result=_rel(run_dir, path),
            result_sha256=sha256_file(path),
            transcript=_rel(run_dir, transcript) if has_transcript else None,
            transcript_sha256=sha256_file(transcript) if has_transcript else None,
            recovered=True,
            row=trial_row(result, kept=kept_stem is not None),
        )
    )


def _split(label: str) -> dict[str, Any]:
    arm, task, trial = label.rsplit("/", 2)
    return {"arm": arm, "task": task, "trial": int(trial)}
