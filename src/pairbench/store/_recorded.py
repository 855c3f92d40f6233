"""Files a report reads beyond results and transcripts, hashed into the journal as written.

Whoever writes such a file records it: the runner the files an attempt leaves in its fixture
folder and the trial's ``shared/`` folder (on the attempt's ``attempt_finished`` line), the
proxy its logs, the campaign view ``campaigns.json``, the report its own files (each a
``files_recorded`` line). A plugin that writes a file its report part reads calls
:func:`record_files` the same way. ``pairbench verify`` checks every recorded file against
the last line that records it, and names a file in those places that no line records.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench._atomic import sha256_file
from pairbench.store._events import AttemptFinished, FilesRecorded, JournalEvent
from pairbench.store._run_dir import RunDir
from pairbench.store._walk import walk_tree

if TYPE_CHECKING:
    from pairbench.schedule._plan import TrialKey


def hash_tree(run_dir: Path, folder: Path) -> dict[str, str]:
    """Every regular file under ``folder`` (a file: itself), by its path relative to
    ``run_dir``, with its SHA-256; ``{}`` when there is none. Half-written ``*.partial``
    files are left out (the atomic writer renames them); symlinks are never followed."""
    try:
        # One lstat answers the common case (an attempt that left no folder) at once.
        mode = os.lstat(folder).st_mode
    except OSError:
        return {}
    if stat.S_ISREG(mode):
        return {folder.relative_to(run_dir).as_posix(): sha256_file(folder)}
    if not stat.S_ISDIR(mode):  # a symlink or a device: never followed, nothing stored
        return {}
    return {
        entry.path.relative_to(run_dir).as_posix(): sha256_file(entry.path)
        for entry in walk_tree(folder)
        if entry.kind == "file" and not entry.path.name.endswith(".partial")
    }


def attempt_files(run_dir: RunDir, key: TrialKey, attempt: int) -> dict[str, str]:
    """What graders read beside an attempt's record, hashed as the attempt left it: its
    fixture folder (a fixture's store and audit log), the trial's ``shared/`` folder, and
    its workspace's manifest when the workspace was over its cap (``store._workspace``)."""
    fixture = f"{run_dir.path}/fixtures/{run_dir.fixture_rel(key, attempt)}"
    shared = f"{run_dir.path}/shared/{key.task}/{key.trial}"  # RunDir.trial_shared
    manifest = run_dir.workspace_manifest_text(key, attempt)
    # Most attempts leave none of them: a stat each says so, no Path made.
    found = [Path(p) for p in (fixture, shared, manifest) if os.path.lexists(p)]
    return {k: v for folder in found for k, v in hash_tree(run_dir.path, folder).items()}


def stored_paths(run_dir: Path, places: Iterable[str]) -> list[str]:
    """Every file under ``places`` (folders or files relative to ``run_dir``), relative to
    ``run_dir``, half-written ``*.partial`` files left out."""
    found: list[str] = []
    for place in places:
        top = run_dir / place
        if top.is_file():
            found.append(place)
            continue
        found.extend(
            entry.path.relative_to(run_dir).as_posix()
            for entry in walk_tree(top)
            if entry.kind == "file" and not entry.path.name.endswith(".partial")
        )
    return sorted(found)


def record_files(run_dir: RunDir, paths: Iterable[Path], by: str) -> dict[str, str]:
    """Hash ``paths`` (files, or folders: every file under them) and append one fsynced
    ``files_recorded`` line naming each; returns what it recorded (nothing to record: no
    line). The caller must be the run's writer (it holds ``RunDir.writer_lock``).

    **Usage**::

        record_files(run_dir, [run_dir.path / "results.json"], by="my-study")
    """
    files: dict[str, str] = {}
    for path in paths:
        files.update(hash_tree(run_dir.path, Path(path)))
    if files:
        record_hashes(run_dir, files, by)
    return files


def record_hashes(run_dir: RunDir, files: Mapping[str, str], by: str) -> None:
    """Append one ``files_recorded`` line for hashes the writer already has."""
    journal = run_dir.journal()
    try:
        journal.append(FilesRecorded(by=by, files=dict(sorted(files.items()))))
    finally:
        journal.close()


def recorded_files(events: Iterable[JournalEvent]) -> dict[str, tuple[int, str]]:
    """Each recorded file's last record: path -> (journal line, SHA-256)."""
    out: dict[str, tuple[int, str]] = {}
    for line, event in enumerate(events, start=1):
        if isinstance(event, FilesRecorded | AttemptFinished):
            for rel, digest in event.files.items():
                out[rel] = (line, digest)
    return out
