"""Pre-registration gates before a run starts: case sets, the lock, sittings."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pairbench import _registry
from pairbench._errors import RunRefused, SpecError
from pairbench.freeze._lock import Lock, build_lock
from pairbench.freeze._verify import verify_experiment
from pairbench.spec._load import LoadedExperiment
from pairbench.store._run_record import RunRecord

HELD_OUT = "held-out"


@dataclass(frozen=True)
class Gate:
    """What the gate decided: which tasks run, under which lock, with what accepted."""

    case_set: str | None
    lock: Lock
    lock_verified: bool
    accepted_harness_change: dict[str, Any] | None
    sitting: int
    """Which sitting of the held-out set under this lock (1 the first); 0 otherwise."""


def effective_case_set(loaded: LoadedExperiment, asked: str | None) -> str | None:
    """``asked``, or calibration when some tasks are held out (they never run by default)."""
    if asked is not None:
        if not loaded.experiment.tasks_in(asked):
            raise RunRefused(f"no task is in case set {asked!r}; check the tasks' case_set")
        return asked
    held = any(t.case_set == HELD_OUT for t in loaded.experiment.tasks)
    return "calibration" if held else None


def _held_out_sittings(runs_dir: Path, lock_sha: str) -> list[str]:
    found = []
    for info_path in sorted(runs_dir.glob("*/run.json")) if runs_dir.is_dir() else []:
        if info_path.parent.name.startswith("."):
            continue  # a folder that never started
        try:
            info = RunRecord.model_validate_json(info_path.read_bytes())
        except (OSError, ValueError):
            continue  # not a run's run.json (damaged): verify and report name it
        if info.case_set == HELD_OUT and info.lock_sha256 == lock_sha:
            found.append(info_path.parent.name)
    return found


def check_gate(
    loaded: LoadedExperiment,
    runs_dir: Path,
    case_set: str | None,
    *,
    accept_harness_change: bool = False,
    new_sitting: bool = False,
) -> Gate:
    """Refuse what pre-registration forbids; otherwise say which lock the run is under."""
    chosen = effective_case_set(loaded, case_set)
    _adapter_checks(loaded, chosen)
    lock = _with_frozen_servers(loaded, build_lock(loaded))
    mismatches = verify_experiment(loaded)
    if chosen != HELD_OUT:
        # Calibration runs need no lock; run.json says whether one verified.
        return Gate(chosen, lock, not mismatches, None, 0)
    blocking = [m for m in mismatches if m.kind != "harness"]
    harness = [m for m in mismatches if m.kind == "harness"]
    if blocking:
        listed = "\n  ".join(str(m) for m in blocking)
        raise RunRefused(
            "refusing a held-out run: the experiment does not match its lock\n  "
            f"{listed}\nRestore the frozen files, or re-freeze (a new pre-registration)."
        )
    accepted = None
    if harness:
        if not accept_harness_change:
            raise RunRefused(
                f"refusing a held-out run: {harness[0]}\n"
                "Run with the pairbench that froze it, or pass --accept-harness-change "
                "(recorded in run.json and shown in every report of the run)."
            )
        accepted = {"expected": harness[0].expected, "found": harness[0].found}
    lock_sha = _lock_sha(loaded)
    earlier = _held_out_sittings(runs_dir, lock_sha)
    if earlier and not new_sitting:
        raise RunRefused(
            f"the held-out case set already ran under this lock ({', '.join(earlier)}); a "
            "held-out set runs once per lock. Pass --new-sitting for a new, separately "
            "reported sitting."
        )
    return Gate(chosen, lock, True, accepted, len(earlier) + 1)


def _adapter_checks(loaded: LoadedExperiment, case_set: str | None) -> None:
    """An arm's adapter class may define ``check_run(settings, root, arm, case_set) ->
    [warning]``: it raises ``RunRefused`` to refuse the run before anything is made (the
    attribution study's held-out run of an engine it cannot contain), and its warnings
    are printed to stderr."""
    exp = loaded.experiment
    for arm in exp.arms:
        agent = exp.arm_agent(arm)
        try:
            cls = _registry.load("agents", agent.adapter)
        except Exception:
            continue  # `load_experiment` already named an unknown adapter
        hook = getattr(cls, "check_run", None)
        if callable(hook):
            for line in hook(dict(agent.settings), loaded.root, arm, case_set):
                print(f"warning: {line}", file=sys.stderr)


def _with_frozen_servers(loaded: LoadedExperiment, lock: Lock) -> Lock:
    """``lock`` with the servers ``freeze`` identified (a lock built now starts none): the
    run's copy is what ``verify`` checks the run's servers against."""
    from pairbench.freeze._hashing import LOCK_NAME
    from pairbench.freeze._lock import read_lock

    path = loaded.root / LOCK_NAME
    if not path.is_file():
        return lock
    try:
        frozen = read_lock(path)
    except SpecError:
        return lock  # verify_experiment names the damaged lock
    return lock.model_copy(update={"servers": frozen.servers})


def _lock_sha(loaded: LoadedExperiment) -> str:
    from pairbench.freeze._hashing import LOCK_NAME, sha256_path

    return sha256_path(loaded.root / LOCK_NAME)
