"""Pre-registration gates before a run starts: case sets and the lock (sittings and plans
are counted in the ledger: ``runner._register``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pairbench._errors import RunRefused, SpecError
from pairbench.freeze._lock import Lock, build_lock
from pairbench.freeze._verify import Mismatch, verify_experiment
from pairbench.spec._load import LoadedExperiment
from pairbench.spec._plugin_checks import adapter_hooks

HELD_OUT = "held-out"


@dataclass(frozen=True)
class Gate:
    """What the gate decided: which tasks run, under which lock, with what accepted."""

    case_set: str | None
    lock: Lock
    lock_verified: bool
    accepted_harness_change: dict[str, Any] | None
    sitting: int
    """Which sitting of the held-out set under this protocol version (1 the first); 0
    otherwise. Counted in the ledger (``runner._register``), not here."""
    accepted_changes: list[dict[str, Any]] = field(default_factory=list)
    """Each change since freeze the run accepted (``--accept-change``): kind, name,
    expected, found."""
    locked: bool = False
    """Whether the experiment has a lock (then the run is registered in its ledger)."""


def effective_case_set(loaded: LoadedExperiment, asked: str | None) -> str | None:
    """``asked``, or calibration when some tasks are held out (they never run by default)."""
    if asked is not None:
        if not loaded.experiment.tasks_in(asked):
            raise RunRefused(f"no task is in case set {asked!r}; check the tasks' case_set")
        return asked
    held = any(t.case_set == HELD_OUT for t in loaded.experiment.tasks)
    return "calibration" if held else None


def change_name(mismatch: Mismatch) -> str:
    """The name ``--accept-change`` takes for a difference from the lock: a file's path
    (``prompts/a.md``), ``experiment``, a code package's name (``graders:exact-answer``),
    ``study``, or a server's name."""
    if mismatch.kind == "experiment":
        return "experiment"
    if mismatch.kind == "code":
        return mismatch.path.split(" (", 1)[0]
    if mismatch.kind == "study":
        return "study"
    return mismatch.path


def check_gate(
    loaded: LoadedExperiment,
    case_set: str | None,
    *,
    accept_harness_change: bool = False,
    accept_changes: Sequence[str] = (),
    confirmation: bool = False,
) -> Gate:
    """Refuse what pre-registration forbids; otherwise say which lock the run is under.

    Every run under a lock refuses a difference from it (a changed prompt, plan, acceptance
    script, manifest, grader) unless ``accept_changes`` names each one; a held-out run and
    a confirmation (``confirmation``) also need a lock, and refuse a changed pairbench
    unless ``accept_harness_change``. Other runs only record a changed pairbench
    (``lock_verified`` false): the harness changes with every commit of pairbench itself.
    Sittings are counted in the ledger when the run is registered (``runner._register``).
    """
    chosen = effective_case_set(loaded, case_set)
    _adapter_checks(loaded, chosen)
    lock = _with_frozen_servers(loaded, build_lock(loaded))
    mismatches = verify_experiment(loaded)
    strict = chosen == HELD_OUT or confirmation
    what = (
        "a held-out run"
        if chosen == HELD_OUT
        else "a confirmation run"
        if confirmation
        else "the run"
    )
    if any(m.kind == "no-lock" for m in mismatches):
        if strict:
            raise RunRefused(
                f"refusing {what}: {loaded.path} has no experiment.lock.json; freeze it first "
                f"(`pairbench freeze {loaded.path}`, then commit the lock and its ledger)"
            )
        return Gate(chosen, lock, False, None, 0)
    blocking = [m for m in mismatches if m.kind != "harness"]
    harness = [m for m in mismatches if m.kind == "harness"]
    asked = set(accept_changes)
    unaccepted = [m for m in blocking if change_name(m) not in asked]
    if unaccepted:
        listed = "\n  ".join(f"{m} (--accept-change {change_name(m)})" for m in unaccepted)
        raise RunRefused(
            f"refusing {what}: the experiment does not match its lock\n  {listed}\n"
            "Restore the frozen files, re-freeze (a new pre-registration), or pass "
            "--accept-change NAME for each (recorded in run.json; every report of the run "
            "leads with it)."
        )
    unused = asked - {change_name(m) for m in blocking}
    if unused:
        raise RunRefused(
            f"--accept-change {sorted(unused)[0]}: nothing of that name differs from the lock; "
            "drop it (a run accepts only what changed)"
        )
    accepted_harness = None
    if harness and strict:
        if not accept_harness_change:
            raise RunRefused(
                f"refusing {what}: {harness[0]}\n"
                "Run with the pairbench that froze it, or pass --accept-harness-change "
                "(recorded in run.json and shown in every report of the run)."
            )
        accepted_harness = {"expected": harness[0].expected, "found": harness[0].found}
    accepted = [
        {"kind": m.kind, "name": change_name(m), "expected": m.expected, "found": m.found}
        for m in blocking
    ]
    return Gate(chosen, lock, not mismatches, accepted_harness, 0, accepted, locked=True)


def _adapter_checks(loaded: LoadedExperiment, case_set: str | None) -> None:
    """An arm's adapter class may define ``check_run(settings, root, arm, case_set) ->
    [warning]``: it raises ``RunRefused`` to refuse the run before anything is made (the
    attribution study's held-out run of an engine it cannot contain), and its warnings
    are printed to stderr."""
    for arm, settings, hook in adapter_hooks(loaded.experiment, "check_run"):
        for line in hook(settings, loaded.root, arm, case_set):
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
    return lock.model_copy(
        update={
            "servers": frozen.servers,
            "protocol_version": frozen.version(),
            "ledger": frozen.ledger,
        }
    )
