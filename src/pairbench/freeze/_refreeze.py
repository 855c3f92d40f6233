"""Freezing under a ledger: a re-freeze after a held-out sitting is a new protocol version.

A held-out set sits once per protocol version. Re-freezing a changed experiment after it sat
would let the operator tune on the held-out results and sit again under a lock that looks
fresh; so the change needs ``freeze --new-version X.Y.Z``, recorded in the lock and the
ledger and shown with the results of every later run. Re-freezing the same bytes changes
nothing and appends nothing.
"""

from __future__ import annotations

from pathlib import Path

from pairbench._atomic import write_atomic
from pairbench._errors import SpecError
from pairbench.freeze._hashing import LEDGER_NAME, sha256_bytes
from pairbench.freeze._ledger import LedgerError, ledger_path, open_ledger, shipped
from pairbench.freeze._lock import Lock, read_lock
from pairbench.spec._load import LoadedExperiment


def _frozen(target: Path) -> tuple[Lock | None, bytes | None]:
    if not target.is_file():
        return None, None
    data = target.read_bytes()
    try:
        return read_lock(target), data
    except SpecError:
        return None, data  # a damaged lock is replaced; the ledger names the one before


def freeze_into_ledger(
    loaded: LoadedExperiment, target: Path, lock: Lock, new_version: str | None
) -> Lock:
    """Write ``lock`` to ``target`` with its protocol version and ledger, appending the
    freeze to the ledger first (under its flock); return the lock written."""
    old, old_bytes = _frozen(target)
    if shipped(target.parent):
        # A built-in study's own lock (``make locks``): no ledger inside the package.
        lock = lock.model_copy(update={"protocol_version": loaded.experiment.version})
        write_atomic(target, lock.to_bytes())
        return lock
    names_ledger = old is not None and old.ledger is not None
    if new_version is not None and not new_version.strip():
        raise LedgerError("--new-version needs a version, e.g. --new-version 1.0.1")
    # A lost ledger may only be replaced by a new pre-registration: a new version.
    with open_ledger(ledger_path(target), must_exist=names_ledger and new_version is None) as led:
        current = led.protocol_version(old.version() if old else loaded.experiment.version)
        version = current if new_version is None else new_version.strip()
        if new_version is not None and version in led.versions() | {current}:
            raise LedgerError(
                f"{led.path}: protocol version {version} was already frozen under this "
                f"ledger; --new-version needs a version not used before (now: {current})"
            )
        lock = lock.model_copy(update={"protocol_version": version, "ledger": LEDGER_NAME})
        data = lock.to_bytes()
        if data == old_bytes and led.entries:
            return lock  # the same lock again: nothing to record
        sat = led.sittings(current)
        if sat and new_version is None:
            runs = ", ".join(f"{e.run_id} (in {e.runs_dir})" for e in sat)
            raise LedgerError(
                f"{target}: the held-out set already sat under protocol version {current} "
                f"({runs}); re-freezing would let it sit again under a fresh-looking lock. "
                f"Fix: `pairbench freeze {loaded.path} --new-version X.Y.Z` (a new protocol "
                "version, shown with every later result), or restore the frozen files"
            )
        led.append(
            led.entry(
                "freeze",
                sha256_bytes(data),
                version,
                canonical_hash=lock.canonical_hash,
                previous_lock_sha256=sha256_bytes(old_bytes) if old_bytes else None,
            )
        )
        write_atomic(target, data)
    return lock
