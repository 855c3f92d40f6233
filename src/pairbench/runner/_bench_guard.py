"""The frozen benchmark, re-hashed around every attempt.

What decides a score must not change while the run scores: the experiment's named files
(protocol, prompts, plans, ``files:`` such as a team's scenario folders with their
``accept.py``) and, for revision arms, the harness files pinned into each frozen worktree
(the production files have their own manifest check, ``_revisions``). Before and after each
attempt every watched file is checked against its hash at the start of the run; a change
makes the attempt ``infra`` naming the file (it is not scored), and since the retry meets
the same change, the run stops.

Cheap enough for every attempt: a file is re-hashed only when its (size, mtime_ns, inode)
changed since it was last hashed, so a check is one ``stat`` per file and one listing per
watched folder (a file added to a folder the lock covers is a change too).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING, NamedTuple

from pairbench._errors import PairbenchError
from pairbench.freeze._lock import named_files
from pairbench.runner._revisions import prepare_revisions, release_revisions
from pairbench.runner._status import mark_stopped
from pairbench.spec._load import LoadedExperiment
from pairbench.store._run_dir import RunDir

if TYPE_CHECKING:
    from pairbench.runner._context import RunContext


class _Stat(NamedTuple):
    size: int
    mtime_ns: int
    inode: int


class BenchGuard:
    """Watched files (by label) and their hashes at the start of the run.

    **Usage**::

        guard = BenchGuard({"prompts/a.md": Path("exp/prompts/a.md")})
        guard.changed()   # [] while nothing changed; else the labels that did
    """

    def __init__(self, roots: Mapping[str, Path]) -> None:
        self._roots = dict(roots)
        self._cache: dict[Path, tuple[_Stat, str]] = {}
        self._frozen = self._state()

    @classmethod
    def for_run(
        cls, loaded: LoadedExperiment, harness: Mapping[str, tuple[Path, Iterable[str]]]
    ) -> BenchGuard:
        """The experiment's named files, and each revision arm's harness files (``harness``:
        arm -> (its frozen tree, the harness paths written into it))."""
        roots = {rel: loaded.resolve(rel) for rel, _role in named_files(loaded)}
        named = {path.resolve() for path in roots.values()}  # a folder in files: once
        roots |= {k: v for k, v in _study_files(loaded).items() if v.resolve() not in named}
        for arm, (tree, paths) in sorted(harness.items()):
            for rel in paths:
                roots[f"arm {arm}'s frozen worktree: {rel}"] = tree / rel
        return cls(roots)

    def _digest(self, path: Path, found: os.stat_result | None = None) -> str | None:
        if found is None:
            try:
                found = os.stat(path)
            except OSError:
                return None
        stat = _Stat(found.st_size, found.st_mtime_ns, found.st_ino)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stat:
            return cached[1]
        try:
            with path.open("rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError:
            return None
        self._cache[path] = (stat, digest)
        return digest

    def _state(self) -> dict[str, str | None]:
        state: dict[str, str | None] = {}
        for label, root in self._roots.items():
            # One stat per watched file (it says both "not a folder" and what to compare).
            try:
                found = os.stat(root)
            except OSError:
                state[label] = None
                continue
            if not S_ISDIR(found.st_mode):
                state[label] = self._digest(root, found)
                continue
            for folder, dirs, names in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(names):
                    path = Path(folder) / name
                    state[f"{label}/{path.relative_to(root).as_posix()}"] = self._digest(path)
        return state

    def changed(self) -> list[str]:
        """The watched files that differ from the start of the run: edited, removed or
        added (in a watched folder), sorted; ``[]`` when none did."""
        now = self._state()
        if now == self._frozen:
            return []
        return sorted(
            k for k in self._frozen.keys() | now.keys() if self._frozen.get(k) != now.get(k)
        )


def _study_files(loaded: LoadedExperiment) -> dict[str, Path]:
    """What the experiment's study reads while the run scores (``Study.guarded``)."""
    name = loaded.experiment.study
    if name is None:
        return {}
    from pairbench.studies import load_study

    hook = load_study(name).guarded
    if hook is None:
        return {}
    return {f"study {name}: {label}": Path(path) for label, path in hook(loaded).items()}


def changed_reason(changed: list[str], when: str) -> str:
    """An attempt's infra reason for a changed benchmark."""
    return (
        f"the frozen benchmark changed {when} the attempt: {', '.join(changed)}. What scores "
        "the run (the experiment's files, the harness in the frozen worktree) must not change "
        "while it runs, so the attempt is not scored and the run stops. Fix: restore the file "
        "(git checkout, or re-freeze for a new pre-registration) and start a new run"
    )


@contextlib.contextmanager
def frozen_benchmark(loaded: LoadedExperiment, run_dir: RunDir, rc: RunContext) -> Iterator[None]:
    """The revision arms checked out, built and frozen for the run (``rc.revisions``), the
    benchmark's files hashed (``rc.guard``), and the worktrees removed after the run; a
    failure to prepare an arm stops the run, recorded."""
    try:
        rc.revisions = prepare_revisions(loaded, run_dir)
    except PairbenchError as exc:
        mark_stopped(run_dir, f"stopped: preparing a revision arm failed: {exc}")
        raise
    try:
        # Hashed now, re-hashed around every attempt: the benchmark the run started with.
        trees = {a: (r.tree, r.harness_files) for a, r in rc.revisions.items()}
        rc.guard = BenchGuard.for_run(loaded, trees)
        yield
    finally:
        release_revisions(rc.revisions)
