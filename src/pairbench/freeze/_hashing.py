"""Byte hashes of files, folders, code and pairbench itself."""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOCK_NAME = "experiment.lock.json"
HASH_LIST_NAME = "protocol_hash.txt"
LEDGER_NAME = "experiment.ledger.jsonl"
# Locks (and their ledgers) shipped inside the package must not feed the package's own
# hash, or every lock would invalidate itself the moment it is written or used.
_EXCLUDED_NAMES = frozenset({LOCK_NAME, HASH_LIST_NAME, LEDGER_NAME})
_EXCLUDED_DIRS = frozenset({"__pycache__"})

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
"""pairbench's installed source folder (``freeze/`` is one of its sub-packages)."""

HARNESS_SCOPE = "pairbench-without-studies/1"
"""What :func:`harness_sha256` covers now, recorded in every lock: pairbench's source but
the study folders ``studies/<name>/`` (each study is hashed on its own, ``_study.py``), so a
change to one study re-freezes its lock and no other. A lock without a scope was frozen
over the whole package, studies included (``None``), and is verified that way."""

Prune = Callable[[tuple[str, ...]], bool]
"""Says of a file's relative path parts whether to leave it out."""


def _in_a_study(parts: tuple[str, ...]) -> bool:
    # `studies/__init__.py` and `studies/_study.py` (the protocol the core calls) stay in.
    return len(parts) > 2 and parts[0] == "studies"


_SCOPES: dict[str | None, Prune | None] = {None: None, HARNESS_SCOPE: _in_a_study}


def known_scope(scope: str | None) -> bool:
    """Whether this pairbench can hash the harness as ``scope`` says (a newer one's may not)."""
    return scope in _SCOPES


def scope_covers_studies(scope: str | None) -> bool:
    """Whether the harness hash of ``scope`` covers the studies (then no lock pins its study
    apart)."""
    return _SCOPES[scope] is None


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_path(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


def folder_sha256(root: Path) -> str:
    """A folder named in ``files:`` (``pbfolder/1``): SHA-256 over the lines
    ``relative/path\\0x-or-dash\\0sha256(bytes)\\n`` of every regular file under it, hidden ones
    included, sorted by path (``x``: executable). Bytecode caches are left out; a symlink is
    hashed as what it points to as text (``->target``), never followed.
    """
    digest = hashlib.sha256()
    entries = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts or path.suffix == ".pyc":
            continue
        if path.is_symlink():
            entries.append((rel.as_posix(), "-", sha256_bytes(f"->{path.readlink()}".encode())))
        elif path.is_file():
            mode = "x" if path.stat().st_mode & 0o111 else "-"
            entries.append((rel.as_posix(), mode, sha256_path(path)))
    for rel_path, mode, sha in sorted(entries):
        digest.update(f"{rel_path}\0{mode}\0{sha}\n".encode())
    return digest.hexdigest()


def _files_under(root: Path, recursive: bool, prune: Prune | None) -> list[Path]:
    # os.walk, skipping excluded and hidden folders whole: pairbench's own tree is hashed
    # twice at every run's start (identity and lock), and a glob of it took ~20 ms a time.
    keep: list[tuple[str, Path]] = []
    for folder, dirs, names in os.walk(root):
        base = Path(folder)
        above = base.relative_to(root).parts
        dirs[:] = (
            [d for d in dirs if d not in _EXCLUDED_DIRS and not d.startswith(".")]
            if recursive
            else []
        )
        for name in names:
            if name in _EXCLUDED_NAMES or name.startswith(".") or name.endswith(".pyc"):
                continue
            parts = (*above, name)
            if prune is not None and prune(parts):
                continue
            path = base / name
            if path.is_file():
                keep.append(("/".join(parts), path))
    return [path for _, path in sorted(keep, key=lambda kept: kept[0])]


def tree_sha256(
    root: Path,
    *,
    recursive: bool = True,
    suffixes: frozenset[str] | None = None,
    prune: Prune | None = None,
) -> str:
    """SHA-256 over ``relative/path\\0sha256(file)\\n`` for every file under ``root``, sorted.

    Relative paths only, so two checkouts of the same bytes hash the same.
    """
    digest = hashlib.sha256()
    for path in _files_under(root, recursive, prune):
        if suffixes is not None and path.suffix not in suffixes:
            continue
        rel = path.relative_to(root).as_posix()
        digest.update(f"{rel}\0{sha256_path(path)}\n".encode())
    return digest.hexdigest()


_HARNESS: dict[str | None, tuple[tuple[tuple[str, int, int, int], ...], str]] = {}
"""The last harness hash per scope, with each file's (path, size, mtime_ns, inode) then."""


def harness_sha256(scope: str | None = HARNESS_SCOPE) -> str:
    """The hash of pairbench's installed source as ``scope`` covers it (shipped locks
    excluded); raises ``KeyError`` for a scope this pairbench does not know.

    A run asks twice as it starts (its identity, its lock): the files are read again only
    when one of them was added, removed, or changed its size, time or inode since.
    """
    prune = _SCOPES[scope]
    files = _files_under(PACKAGE_ROOT, True, prune)
    stamp = tuple(
        (str(path), found.st_size, found.st_mtime_ns, found.st_ino)
        for path in files
        for found in (path.stat(),)
    )
    cached = _HARNESS.get(scope)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    digest = hashlib.sha256()
    for path in files:
        rel = path.relative_to(PACKAGE_ROOT).as_posix()
        digest.update(f"{rel}\0{sha256_path(path)}\n".encode())
    _HARNESS[scope] = (stamp, digest.hexdigest())
    return _HARNESS[scope][1]


def code_identity(obj: Any) -> tuple[str, str]:
    """(module package, hash) of the code that defines a plugin object.

    The folder of the defining module is hashed (not recursively): a study's graders,
    fixture and fixture server live together, and a change to any of them must show.
    """
    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    module = inspect.getmodule(target)
    source = inspect.getsourcefile(target)
    if module is None or source is None:
        return (getattr(target, "__module__", "?"), "unknown")
    package = module.__name__.rpartition(".")[0] or module.__name__
    if Path(source).name == "__init__.py":
        package = module.__name__
    return package, tree_sha256(
        Path(source).resolve().parent, recursive=False, suffixes=frozenset({".py"})
    )


def python_version() -> str:
    return ".".join(str(part) for part in sys.version_info[:3])
