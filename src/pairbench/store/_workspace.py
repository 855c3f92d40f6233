"""The bytes an attempt's workspace keeps in the run folder, capped (``budget.workspace_kept``).

An agent's work folder lives in the run folder (``work/<arm>/<task>/<trial>.<attempt>/``).
Graders and detectors read it whole; then, when its regular files add up to more than
the cap, the smallest files are kept while they fit and the rest are removed, and a
manifest beside the folder (``<trial>.<attempt>.manifest.json``) lists every entry with
its size and SHA-256 (a kept file's too, so the manifest is the whole inventory). The
manifest is hashed into the attempt's journal line, so ``pairbench verify`` checks it; the
attempt's record says what was not kept and why (:class:`WorkspaceKept`).

Names are the subject's: a name that is not UTF-8, or holds a newline, is stored escaped
(``display_name``) with its exact bytes in hex beside it, and every secret value in a name
is redacted.

**Usage**::

    kept = cap_workspace(work, run_dir.workspace_manifest(key, 1), run_dir.path, 256 << 20)
    kept.dropped_files if kept else 0
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pairbench._atomic import write_atomic
from pairbench._model import Frozen
from pairbench.store._walk import EntryKind, display_name, walk_tree

if TYPE_CHECKING:
    from pairbench.store._redact import Redactor

__all__ = ["ManifestEntry", "WorkspaceKept", "WorkspaceManifest", "cap_workspace"]


class ManifestEntry(Frozen):
    """One entry of a workspace manifest."""

    name: str
    """Relative to the work folder, escaped for display (``\\xNN``, ``\\n``), secrets
    redacted."""
    name_hex: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The name's exact bytes in hex, where ``name`` escapes them (never where it hides a
    secret)."""
    kind: EntryKind
    """``file``, ``symlink`` (never followed; its target is not stored) or ``other``."""
    size: int = 0
    """Bytes (a regular file's)."""
    sha256: str | None = None
    """A regular file's SHA-256 (read in chunks), as the attempt left it, before any
    redaction; None for the others, or a file the harness could not read."""
    kept: bool
    """Whether its bytes are still in the run folder."""


class WorkspaceManifest(Frozen):
    """``work/<arm>/<task>/<trial>.<attempt>.manifest.json``: a capped workspace's entries."""

    schema_id: Literal["pairbench.workspace-manifest/1"] = "pairbench.workspace-manifest/1"
    cap_bytes: int
    """``budget.workspace_kept`` when the attempt ran."""
    total_bytes: int
    """The regular files' bytes as the attempt left them."""
    entries: list[ManifestEntry]


class WorkspaceKept(Frozen):
    """In a record (``TrialResult.workspace``): the workspace was over its cap, and what
    was not kept. Absent when everything was kept."""

    cap_bytes: int
    """``budget.workspace_kept``."""
    total_bytes: int
    """What the workspace's regular files held."""
    dropped_files: int
    """Files whose bytes were not kept (listed, hashed, in the manifest)."""
    dropped_bytes: int
    manifest: str
    """The manifest's path, relative to the run folder."""

    def summary(self) -> str:
        """One line for a report or a page.

        >>> kept = WorkspaceKept(cap_bytes=1 << 20, total_bytes=3 << 20, dropped_files=1,
        ...                      dropped_bytes=2 << 20, manifest="m.json")
        >>> kept.summary().split(": ")[0]
        '1 workspace file (2.0 MiB) not kept'
        """
        files = f"{self.dropped_files} workspace file{'s' if self.dropped_files != 1 else ''}"
        return (
            f"{files} ({_mib(self.dropped_bytes)}) not kept: the workspace held "
            f"{_mib(self.total_bytes)}, over budget.workspace_kept ({_mib(self.cap_bytes)}); "
            f"names, sizes and SHA-256 in {self.manifest}"
        )


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except PermissionError:
        # An agent may leave a folder read-only; the harness's user owns it.
        path.parent.chmod(path.parent.stat().st_mode | stat.S_IRWXU)
        path.unlink(missing_ok=True)


def cap_workspace(
    folder: Path, manifest: Path, run_dir: Path, cap: int, redactor: Redactor | None = None
) -> WorkspaceKept | None:
    """Keep at most ``cap`` bytes of ``folder``'s regular files (smallest first, so the
    many small files an agent meant survive its one huge one); None when all fit.

    Over the cap, the manifest of every entry is written to ``manifest`` and the files
    that did not fit are removed. ``redactor``: what keeps secret values out of the names.
    Symlinks are never followed, however deep the folders nest.
    """
    entries = list(walk_tree(folder))
    total = sum(e.size for e in entries if e.kind == "file")
    if total <= cap:
        return None
    room = cap
    kept: set[str] = set()
    for entry in sorted((e for e in entries if e.kind == "file"), key=lambda e: (e.size, e.rel)):
        if entry.size > room:
            break  # sorted by size: nothing after it fits either
        kept.add(entry.rel)
        room -= entry.size
    listed: list[ManifestEntry] = []
    for entry in entries:
        shown = display_name(entry.rel)
        name = redactor.redact(shown) if redactor is not None else shown
        raw = os.fsencode(entry.rel)
        # The exact bytes only where escaping changed the name: never for a name that held
        # a secret (its hex would hold the value).
        exact = name == shown and name.encode("utf-8") != raw
        listed.append(
            ManifestEntry(
                name=name,
                name_hex=raw.hex() if exact else None,
                kind=entry.kind,
                size=entry.size,
                sha256=_sha256(entry.path) if entry.kind == "file" else None,
                kept=entry.kind != "file" or entry.rel in kept,
            )
        )
    body = WorkspaceManifest(cap_bytes=cap, total_bytes=total, entries=listed)
    write_atomic(manifest, (body.model_dump_json(indent=1) + "\n").encode("utf-8"))
    dropped = [e for e in entries if e.kind == "file" and e.rel not in kept]
    for entry in dropped:
        _remove(entry.path)
    return WorkspaceKept(
        cap_bytes=cap,
        total_bytes=total,
        dropped_files=len(dropped),
        dropped_bytes=sum(e.size for e in dropped),
        manifest=manifest.relative_to(run_dir).as_posix(),
    )
