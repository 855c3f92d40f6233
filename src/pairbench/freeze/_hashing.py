"""Byte hashes of files, folders, code and pairbench itself."""

from __future__ import annotations

import hashlib
import inspect
import sys
from pathlib import Path
from typing import Any

LOCK_NAME = "experiment.lock.json"
HASH_LIST_NAME = "protocol_hash.txt"
# Locks shipped inside the package must not feed the package's own hash, or every lock
# would invalidate itself the moment it is written.
_EXCLUDED_NAMES = frozenset({LOCK_NAME, HASH_LIST_NAME})
_EXCLUDED_DIRS = frozenset({"__pycache__"})


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_path(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


def _files_under(root: Path, recursive: bool) -> list[Path]:
    found = root.rglob("*") if recursive else root.glob("*")
    keep = []
    for path in found:
        rel = path.relative_to(root)
        if not path.is_file() or path.name in _EXCLUDED_NAMES or path.suffix == ".pyc":
            continue
        if any(part in _EXCLUDED_DIRS or part.startswith(".") for part in rel.parts):
            continue
        keep.append(path)
    return sorted(keep, key=lambda p: p.relative_to(root).as_posix())


def tree_sha256(
    root: Path, *, recursive: bool = True, suffixes: frozenset[str] | None = None
) -> str:
    """SHA-256 over ``relative/path\\0sha256(file)\\n`` for every file under ``root``, sorted.

    Relative paths only, so two checkouts of the same bytes hash the same.
    """
    digest = hashlib.sha256()
    for path in _files_under(root, recursive):
        if suffixes is not None and path.suffix not in suffixes:
            continue
        rel = path.relative_to(root).as_posix()
        digest.update(f"{rel}\0{sha256_path(path)}\n".encode())
    return digest.hexdigest()


def harness_sha256() -> str:
    """The hash of pairbench's installed source (shipped locks excluded)."""
    import pairbench

    return tree_sha256(Path(pairbench.__file__).resolve().parent)


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
