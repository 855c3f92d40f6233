"""Snapshots of folders (path, mode, sha256) and what changed between two of them."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Literal

from pairbench._model import Frozen

Area = Literal["workspace", "home", "perimeter"]


class FileState(Frozen):
    """One file (or symlink) of a snapshot."""

    mode: str
    """``100644``, ``100755`` or ``120000`` (git's spelling)."""
    sha256: str
    """Of the bytes (a symlink's: of its target text)."""


class FileChange(Frozen):
    """One path that differs between two snapshots."""

    area: Area
    path: str
    change: Literal["added", "removed", "content", "mode"]
    before: str | None = None
    """sha256 before (None when added)."""
    after: str | None = None
    """sha256 after (None when removed)."""


def snapshot(root: Path) -> dict[str, FileState]:
    """Every file and symlink under ``root`` (symlinks not followed), by relative path."""
    states: dict[str, FileState] = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            path = Path(folder) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                mode, data = "120000", os.readlink(path).encode("utf-8", "surrogateescape")
            else:
                mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
                data = path.read_bytes()
            rel = path.relative_to(root).as_posix()
            states[rel] = FileState(mode=mode, sha256=hashlib.sha256(data).hexdigest())
    return states


def delta(
    area: Area, before: dict[str, FileState], after: dict[str, FileState]
) -> list[FileChange]:
    """The changes from ``before`` to ``after``, sorted by path."""
    changes: list[FileChange] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old is None and new is not None:
            changes.append(FileChange(area=area, path=path, change="added", after=new.sha256))
        elif new is None and old is not None:
            changes.append(FileChange(area=area, path=path, change="removed", before=old.sha256))
        elif old is not None and new is not None:
            if old.sha256 != new.sha256:
                changes.append(FileChange(area=area, path=path, change="content",
                                          before=old.sha256, after=new.sha256))  # fmt: skip
            if old.mode != new.mode:
                changes.append(FileChange(area=area, path=path, change="mode",
                                          before=old.sha256, after=new.sha256))  # fmt: skip
    return changes
