"""Walking and removing folders a subject wrote, whatever it left in them.

An agent's workspace is untrusted: symlinks to ``/`` or to themselves, names that are
not UTF-8 or hold newlines, folders nested thousands deep. ``os.walk``, ``Path.rglob``
and ``shutil.rmtree`` recurse once per level (Python 3.11), so 1,000 nested folders
raise ``RecursionError``; these walk with an explicit stack instead, and never follow a
symlink (a link is an entry of its own, its target never read).

**Usage**::

    for entry in walk_tree(folder):
        entry.rel, entry.kind, entry.size    # 'out/report.md', 'file', 120
    remove_tree(folder)
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, NamedTuple

__all__ = ["TreeEntry", "display_name", "remove_tree", "walk_tree"]

EntryKind = Literal["file", "symlink", "other"]


class TreeEntry(NamedTuple):
    """One entry under a walked folder (folders themselves are not entries)."""

    path: Path
    rel: str
    """Relative to the walked folder, ``/``-separated; an invalid UTF-8 byte is kept as
    Python's surrogate escape (see :func:`display_name` for showing it)."""
    kind: EntryKind
    """``file`` (regular), ``symlink`` (never followed) or ``other`` (fifo, socket, ...)."""
    size: int
    """A regular file's size in bytes; 0 for the others."""


def walk_tree(folder: Path) -> Iterator[TreeEntry]:
    """Every entry under ``folder``, depth first, names sorted; symlinks not followed.

    A folder that cannot be listed (an agent took its permissions away) is skipped:
    what the harness cannot read, it cannot store either.
    """
    if folder.is_symlink() or not folder.is_dir():
        return
    stack: list[tuple[str, str]] = [(os.fspath(folder), "")]
    while stack:
        path, rel = stack.pop()
        try:
            with os.scandir(path) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        folders: list[tuple[str, str]] = []
        for entry in entries:
            name = f"{rel}{entry.name}"
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                folders.append((entry.path, f"{name}/"))
            elif stat.S_ISLNK(info.st_mode):
                yield TreeEntry(Path(entry.path), name, "symlink", 0)
            elif stat.S_ISREG(info.st_mode):
                yield TreeEntry(Path(entry.path), name, "file", info.st_size)
            else:
                yield TreeEntry(Path(entry.path), name, "other", 0)
        stack.extend(reversed(folders))


def remove_tree(folder: Path) -> None:
    """Remove ``folder`` and everything under it, however deep (best effort: an entry
    that cannot be removed is left). A symlink is removed, never its target."""
    if folder.is_symlink() or not folder.is_dir():
        folder.unlink(missing_ok=True)
        return
    # Post-order without recursion: a folder is removed once its entries are.
    stack: list[tuple[str, bool]] = [(os.fspath(folder), False)]
    while stack:
        path, emptied = stack.pop()
        if emptied:
            with contextlib.suppress(OSError):
                os.rmdir(path)
            continue
        stack.append((path, True))
        try:
            os.chmod(path, 0o700)  # an agent may have locked it; the harness's user owns it
            with os.scandir(path) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, False))
                else:
                    os.unlink(entry.path)


def display_name(rel: str) -> str:
    """``rel`` as text that is safe to print or store as JSON: an invalid UTF-8 byte as
    ``\\xNN``, a control character (a newline in a name) as its escape.

    >>> display_name("a\\nb") == "a\\\\nb"
    True
    """
    raw = os.fsencode(rel).decode("utf-8", "backslashreplace")
    return "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in raw
    )
