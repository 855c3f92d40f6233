"""Verifying an experiment against its lock (a run: ``_verify_run.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pairbench.freeze._hashing import LOCK_NAME
from pairbench.freeze._lock import Lock, read_lock, rebuild_lock
from pairbench.spec._load import LoadedExperiment, load_experiment

_LABELS = {
    "harness": "harness changed (pairbench version or source)",
    "study": "study changed (its version or source)",
}


@dataclass(frozen=True)
class Mismatch:
    """One difference between what was frozen (or journaled) and what is found now."""

    kind: str
    """file, missing-file, new-file, experiment, code, study, harness, no-lock, result,
    transcript, unjournaled, lock, journal, run.json, row, table, report, server."""
    path: str
    expected: str | None
    found: str | None

    def __str__(self) -> str:
        label = _LABELS.get(self.kind, self.kind)
        return f"{label}: {self.path}: expected {self.expected or '-'}, found {self.found or '-'}"


def diff_locks(expected: Lock, found: Lock) -> list[Mismatch]:
    """Every difference, files first; a changed pairbench is its own kind, ``harness`` (a
    held-out run may accept it), and so is the changed study, ``study`` (never accepted: it
    is the code under study, as its graders are)."""
    out: list[Mismatch] = []
    if expected.canonical_hash != found.canonical_hash:
        out.append(
            Mismatch(
                "experiment",
                "experiment model (canonical hash)",
                expected.canonical_hash,
                found.canonical_hash,
            )
        )
    old = {f.path: f.sha256 for f in expected.files}
    new = {f.path: f.sha256 for f in found.files}
    for path in sorted(old.keys() | new.keys()):
        if path not in new:
            out.append(Mismatch("missing-file", path, old[path], None))
        elif path not in old:
            out.append(Mismatch("new-file", path, None, new[path]))
        elif old[path] != new[path]:
            out.append(Mismatch("file", path, old[path], new[path]))
    old_code = {c.name: c for c in expected.code}
    new_code = {c.name: c for c in found.code}
    for name in sorted(old_code.keys() | new_code.keys()):
        a, b = old_code.get(name), new_code.get(name)
        if a is None or b is None or a.sha256 != b.sha256:
            out.append(
                Mismatch(
                    "code",
                    f"{name} ({(a or b).package})",  # type: ignore[union-attr]
                    a.sha256 if a else None,
                    b.sha256 if b else None,
                )
            )
    if expected.study != found.study:
        named = expected.study or found.study
        out.append(
            Mismatch(
                "study",
                named.name if named else "?",
                expected.study.describe() if expected.study else None,
                found.study.describe() if found.study else None,
            )
        )
    if expected.harness != found.harness:
        out.append(
            Mismatch(
                "harness",
                "pairbench",
                f"{expected.harness.version} {expected.harness.source_sha256}",
                f"{found.harness.version} {found.harness.source_sha256}",
            )
        )
    return out


def verify_experiment(experiment: Path | LoadedExperiment) -> list[Mismatch]:
    """Recompute the lock and list every difference from ``experiment.lock.json``."""
    loaded = experiment if isinstance(experiment, LoadedExperiment) else load_experiment(experiment)
    path = loaded.root / LOCK_NAME
    if not path.is_file():
        return [Mismatch("no-lock", LOCK_NAME, "a lock (run `pairbench freeze`)", None)]
    frozen = read_lock(path)
    return diff_locks(frozen, rebuild_lock(loaded, frozen))
