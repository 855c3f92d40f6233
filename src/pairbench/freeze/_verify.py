"""Verifying an experiment against its lock, and a run against its journal and lock."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pairbench._errors import SpecError
from pairbench.freeze._hashing import LOCK_NAME, sha256_path
from pairbench.freeze._lock import Lock, build_lock, read_lock
from pairbench.spec._load import LoadedExperiment, load_experiment
from pairbench.store._journal import Journal
from pairbench.store._load_run import read_run_info
from pairbench.store._run_dir import RunDir


@dataclass(frozen=True)
class Mismatch:
    """One difference between what was frozen (or journaled) and what is found now."""

    kind: str
    """file, missing-file, new-file, experiment, code, harness, no-lock, result, transcript,
    unjournaled, lock."""
    path: str
    expected: str | None
    found: str | None

    def __str__(self) -> str:
        label = {"harness": "harness changed (pairbench version or source)"}.get(
            self.kind, self.kind
        )
        return f"{label}: {self.path}: expected {self.expected or '-'}, found {self.found or '-'}"


def diff_locks(expected: Lock, found: Lock) -> list[Mismatch]:
    """Every difference, files first; a changed pairbench is its own kind, ``harness``."""
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
    return diff_locks(read_lock(path), build_lock(loaded))


def _check_file(run_dir: Path, kind: str, rel: object, expected: object) -> Mismatch | None:
    if not isinstance(rel, str):
        return None
    path = run_dir / rel
    try:
        inside = path.resolve().is_relative_to(run_dir.resolve()) and not Path(rel).is_absolute()
    except (OSError, ValueError):  # a name too long, a NUL byte, a symlink loop
        inside = False
    if not inside:  # the journal names files inside the run; hashing /etc/passwd proves nothing
        return Mismatch(kind, rel, str(expected), "not a file inside the run directory")
    if not path.is_file():
        return Mismatch(kind, rel, str(expected), None)
    try:
        found = sha256_path(path)
    except OSError as exc:
        return Mismatch(kind, rel, str(expected), f"unreadable ({exc.strerror or exc})")
    return None if found == expected else Mismatch(kind, rel, str(expected), found)


def verify_run(run_dir: Path) -> list[Mismatch]:
    """Check every result and transcript against the journal, and the run's lock.

    Raises ``RunDirError`` when ``run.json`` or the journal cannot be read at all.
    """
    opened = RunDir.open(run_dir)
    info = read_run_info(opened)
    out: list[Mismatch] = []
    journaled: set[str] = set()
    for event in Journal.read(opened.journal_path):
        if event.get("event") != "attempt_finished":
            continue
        for kind, key in (("result", "result"), ("transcript", "transcript")):
            rel = event.get(key)
            if isinstance(rel, str):
                journaled.add(rel)
            found = _check_file(run_dir, kind, rel, event.get(f"{key}_sha256"))
            if found:
                out.append(found)
    for folder in ("results", "infra", "interrupted", "transcripts"):
        for path in sorted((run_dir / folder).rglob("*")) if (run_dir / folder).is_dir() else []:
            rel = path.relative_to(run_dir).as_posix()
            if path.is_file() and not path.name.endswith(".partial") and rel not in journaled:
                out.append(Mismatch("unjournaled", rel, "a journal entry", None))
    stored = run_dir / "lock.json"
    if info.get("lock_sha256"):
        if not stored.is_file():
            out.append(Mismatch("lock", "lock.json", info["lock_sha256"], None))
        elif sha256_path(stored) != info["lock_sha256"]:
            out.append(Mismatch("lock", "lock.json", info["lock_sha256"], sha256_path(stored)))
        else:
            exp_file = Path(str(info.get("experiment_file", "")))
            try:
                frozen = read_lock(stored)
            except SpecError:  # its bytes match run.json's hash: run.json was edited too
                out.append(Mismatch("lock", "lock.json", "a pairbench lock", "not one"))
                return out
            if exp_file.is_file():
                now = build_lock(load_experiment(exp_file))
                out += [
                    Mismatch(
                        m.kind, f"{m.path} (experiment changed since the run)", m.expected, m.found
                    )
                    for m in diff_locks(frozen, now)
                    if m.kind != "harness"
                ]
    return out
