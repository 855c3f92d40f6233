"""Crash-safe file writes: a reader sees the old bytes or the new ones, never half a file."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename inside it survives a power cut."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, *, overwrite: bool = True) -> str:
    """Write ``data`` to ``path`` via a fsynced temporary file and a rename; return its SHA-256.

    With ``overwrite=False`` an existing file is an error (results are never overwritten).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if not overwrite and path.exists():
        raise FileExistsError(f"{path} already exists; pairbench never overwrites a stored result")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            # link() fails if the target exists, so two writers cannot both win.
            os.link(tmp, path)
            os.unlink(tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()
