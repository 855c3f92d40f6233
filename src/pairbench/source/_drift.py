"""A worktree on disk against its manifest: read-only freezing, re-hashing, and drift."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Literal

from pairbench._model import Frozen
from pairbench.source._errors import SourceDrift
from pairbench.source._manifest import Manifest, ManifestEntry
from pairbench.spec._glob import PathFilter

_WRITE = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


class Drift(Frozen):
    """One way a production file on disk differs from its manifest entry."""

    path: str
    """The path, from the worktree's root."""
    kind: Literal["content", "mode", "missing", "extra"]
    """``content`` (other bytes), ``mode`` (exec bit or file type), ``missing`` (in the
    manifest, not on disk) or ``extra`` (on disk under the production globs, not in it)."""

    def __str__(self) -> str:
        return f"{self.path} ({self.kind})"


def disk_entry(root: Path, path: str) -> ManifestEntry | None:
    """What ``root/path`` holds, as a manifest entry (None when absent or not a file).

    A symlink is never followed: its entry hashes its target text, as git's blob does.
    """
    full = root / path
    try:
        info = full.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(full).encode("utf-8", "surrogateescape")
        return ManifestEntry(path=path, mode="120000", sha256=hashlib.sha256(target).hexdigest())
    if not stat.S_ISREG(info.st_mode):
        return None
    digest = hashlib.sha256()
    with full.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    # git records one exec bit: the owner's, as core.fileMode checks it.
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    return ManifestEntry(path=path, mode=mode, sha256=digest.hexdigest())


def _files(root: Path) -> list[str]:
    """Every file and symlink below ``root`` (``/``-separated), the worktree's ``.git`` left out."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        rel = Path(folder).relative_to(root)
        if rel == Path("."):
            dirs[:] = [d for d in dirs if d != ".git"]
            names = [n for n in names if n != ".git"]
        for name in names:
            found.append((rel / name).as_posix())
        # Symlinks to folders are listed by os.walk as dirs; they are files to git.
        found += [(rel / d).as_posix() for d in dirs if (Path(folder) / d).is_symlink()]
    return found


def rehash(worktree: Path, manifest: Manifest) -> list[Drift]:
    """Every difference between ``worktree``'s production files and ``manifest``, by path.

    **Usage**::

        drift = rehash(Path(tree.path), tree.manifest)
        if drift: ...            # or require_no_drift(), which raises SourceDrift
    """
    wanted = {e.path: e for e in manifest.entries}
    drift: list[Drift] = []
    for path, entry in wanted.items():
        found = disk_entry(worktree, path)
        if found is None:
            drift.append(Drift(path=path, kind="missing"))
            continue
        if found.sha256 != entry.sha256:
            drift.append(Drift(path=path, kind="content"))
        if found.mode != entry.mode:
            drift.append(Drift(path=path, kind="mode"))
    selected = PathFilter(manifest.include, manifest.exclude)
    drift += [
        Drift(path=p, kind="extra") for p in _files(worktree) if selected(p) and p not in wanted
    ]
    return sorted(drift, key=lambda d: (d.path.encode("utf-8"), d.kind))


def require_no_drift(worktree: Path, manifest: Manifest) -> None:
    """``rehash``, raising ``SourceDrift`` that names every drifted path.

    **Usage**::

        require_no_drift(Path(tree.path), tree.manifest)   # after every campaign
    """
    drift = rehash(worktree, manifest)
    if drift:
        raise SourceDrift(str(worktree), [str(d) for d in drift])


def freeze_readonly(worktree: Path) -> None:
    """Take every write bit off ``worktree``'s files and folders (symlinks are left alone).

    Folders too: without their write bit no file can be added, removed or renamed.

    **Usage**::

        freeze_readonly(Path(tree.path))    # after the build, before the first trial
    """
    for folder, dirs, names in os.walk(worktree, topdown=False):
        for name in [*names, *dirs]:
            _chmod(Path(folder) / name, clear=_WRITE)
    _chmod(worktree, clear=_WRITE)


def restore_writable(worktree: Path) -> None:
    """Give the owner back its write bit on every folder and file below ``worktree``."""
    _chmod(worktree, add=stat.S_IWUSR)
    for folder, dirs, names in os.walk(worktree):  # top-down: a folder opens before its files
        for name in [*dirs, *names]:
            _chmod(Path(folder) / name, add=stat.S_IWUSR)


def _chmod(path: Path, *, clear: int = 0, add: int = 0) -> None:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return  # chmod would follow it, to a file that may lie outside the worktree
    os.chmod(path, (stat.S_IMODE(info.st_mode) & ~clear) | add)
