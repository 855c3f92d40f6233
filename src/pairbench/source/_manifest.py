"""The production manifest of a commit (``pbprod/1``), read from git's tree, and its diff.

Definition of ``pbprod/1`` (stored; change it only with a new scheme name):

- entries: every blob of ``git ls-tree -r -z --full-tree COMMIT`` whose path the production
  ``include`` selects and ``exclude`` does not (git ``:(glob)`` semantics, ``_glob.py``);
- each entry is ``{"path", "mode", "sha256"}``: the UTF-8 path, git's mode (``100644``,
  ``100755`` or ``120000``) and the SHA-256 of the blob's bytes (a symlink's blob is its
  target text);
- the list is sorted by the UTF-8 bytes of the path, written as ``canonical_json`` (keys
  sorted, no whitespace, UTF-8), and the manifest's ``sha256`` is that text's SHA-256.

Nothing else (commit, globs, blob ids) is hashed, so a commit that changes only excluded
paths (tests, docs) keeps the hash, and equal hashes mean equal production bytes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pairbench._model import Frozen
from pairbench.source._errors import SourceError
from pairbench.source._git import git_dir_of, isolated_git
from pairbench.spec._canonical import canonical_json
from pairbench.spec._glob import PathFilter
from pairbench.spec._revision import Commit

SCHEME: Literal["pbprod/1"] = "pbprod/1"
_FILE_MODES = ("100644", "100755", "120000")


class ManifestEntry(Frozen):
    """One production file of a commit."""

    path: str
    """Path from the repository root, ``/``-separated."""
    mode: str
    """git's mode: ``100644`` (file), ``100755`` (executable) or ``120000`` (symlink)."""
    sha256: str
    """SHA-256 of the blob's bytes (a symlink's: its target text)."""


class Manifest(Frozen):
    """The production files of one commit and their hash.

    Stored as ``sources/<arm>/production-manifest.json``.
    """

    scheme: Literal["pbprod/1"] = SCHEME
    """How ``sha256`` is computed (the module docstring of ``pairbench.source._manifest``)."""
    commit: Commit
    """The commit whose tree was read."""
    include: list[str]
    """The production globs that selected the entries."""
    exclude: list[str]
    """The globs that took entries back out."""
    entries: list[ManifestEntry]
    """The production files, sorted by the UTF-8 bytes of their paths."""
    sha256: str
    """The production byte hash: SHA-256 of the canonical JSON of ``entries``."""


class ManifestChange(Frozen):
    """One difference between two manifests (or two trees) at one path."""

    path: str
    """The path that differs."""
    change: Literal["added", "removed", "content", "mode"]
    """``added``/``removed`` (only in the second/first), ``content`` (other bytes) or ``mode``
    (an exec bit flipped, or a file became a symlink)."""


def entries_sha256(entries: list[ManifestEntry]) -> str:
    """The ``pbprod/1`` hash of entries (sorted here, so any order gives the same hash)."""
    ordered = sorted(entries, key=lambda e: e.path.encode("utf-8"))
    return hashlib.sha256(canonical_json([e.model_dump(mode="json") for e in ordered])).hexdigest()


def production_manifest(
    repo: Path, commit: str, include: list[str], exclude: list[str] | None = None
) -> Manifest:
    """The ``pbprod/1`` manifest of ``commit``'s tree in ``repo`` (a repository or bare cache).

    Reads objects only: the user's repository can be passed as it is.

    **Usage**::

        manifest = production_manifest(repo, commit, ["minirt/**"], ["minirt/tests/**"])
        manifest.sha256      # equal for two commits that differ only under minirt/tests/
    """
    exclude = list(exclude or [])
    selected = PathFilter(include, exclude)
    where = f"{repo} at {commit[:12]}"
    listing = isolated_git(
        ["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", commit],
        git_dir=git_dir_of(repo),
        what=f"{where}: cannot read the tree (is the commit in the repository?)",
    )
    picked: list[tuple[str, str, str]] = []  # (path, mode, blob id)
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, raw_path = record.split(b"\t", 1)
        mode, _kind, oid = meta.decode("ascii").split(" ")
        path = raw_path.decode("utf-8", "surrogateescape")
        if not selected(path):
            continue
        if mode == "160000":
            raise SourceError(
                f"{where}: {path} is a submodule, whose bytes are not in this tree. Fix: "
                "exclude it from production, or vendor its files into the repository"
            )
        if mode not in _FILE_MODES:
            raise SourceError(f"{where}: {path} has git mode {mode}, not a file or symlink")
        try:
            raw_path.decode("utf-8")
        except UnicodeDecodeError:
            raise SourceError(
                f"{where}: {path!r} is not a UTF-8 path. Fix: rename it or exclude it"
            ) from None
        picked.append((path, mode, oid))
    if not picked:
        raise SourceError(
            f"{where}: the production globs select no file (include {include}, exclude "
            f"{exclude}). Fix: patterns are anchored at the repository root, e.g. 'pkg/**'"
        )
    hashes = _blob_sha256s(repo, [oid for _, _, oid in picked], where)
    entries = [ManifestEntry(path=p, mode=m, sha256=hashes[oid]) for p, m, oid in picked]
    entries.sort(key=lambda e: e.path.encode("utf-8"))
    return Manifest(
        commit=commit, include=list(include), exclude=exclude, entries=entries,
        sha256=entries_sha256(entries),
    )  # fmt: skip


def _blob_sha256s(repo: Path, oids: list[str], where: str) -> dict[str, str]:
    """SHA-256 of each blob's bytes, from one ``git cat-file --batch`` for all of them."""
    unique = sorted(set(oids))
    out = isolated_git(
        ["cat-file", "--batch"],
        git_dir=git_dir_of(repo),
        stdin=b"".join(f"{oid}\n".encode("ascii") for oid in unique),
        what=f"{where}: cannot read blobs",
    )
    hashes: dict[str, str] = {}
    at = 0
    for oid in unique:
        end = out.index(b"\n", at)
        header = out[at:end].decode("ascii").split(" ")
        if len(header) != 3 or header[0] != oid or header[1] != "blob":
            raise SourceError(f"{where}: blob {oid} is missing from the repository")
        size = int(header[2])
        hashes[oid] = hashlib.sha256(out[end + 1 : end + 1 + size]).hexdigest()
        at = end + 1 + size + 1  # the content is followed by one newline
    return hashes


def diff_manifests(a: Manifest, b: Manifest) -> list[ManifestChange]:
    """What changed from ``a`` to ``b``, path by path (a path may change both content and mode).

    **Usage**::

        for change in diff_manifests(baseline, candidate):
            print(change.path, change.change)     # "minirt/loop.py content"
    """
    old = {e.path: e for e in a.entries}
    new = {e.path: e for e in b.entries}
    changes: list[ManifestChange] = []
    for path in sorted(old.keys() | new.keys(), key=lambda p: p.encode("utf-8")):
        before, after = old.get(path), new.get(path)
        if before is None:
            changes.append(ManifestChange(path=path, change="added"))
        elif after is None:
            changes.append(ManifestChange(path=path, change="removed"))
        else:
            if before.sha256 != after.sha256:
                changes.append(ManifestChange(path=path, change="content"))
            if before.mode != after.mode:
                changes.append(ManifestChange(path=path, change="mode"))
    return changes
