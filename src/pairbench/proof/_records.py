"""The records of ``mounted.jsonl``, as the probe writes them, and their one reader."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pairbench._model import Frozen
from pairbench.proof._errors import ProofError
from pairbench.store._jsonl import read_jsonl

Kind = Literal["start", "source", "bytecode", "extension", "opened", "error"]


class MountedFile(Frozen):
    """One line of ``mounted.jsonl``: a file a probed process loaded (or its start, or a
    failure of the probe). Written by ``pairbench/proof/_mounted_probe.py``."""

    pid: int
    """The process that loaded it."""
    kind: Kind
    """``source`` (bytes compiled), ``bytecode`` (a ``.pyc`` used instead), ``extension``,
    ``opened`` (read-only under a watched root); ``start`` and ``error`` are about the probe."""
    path: str | None = None
    """The file's real path, as the process saw it (absolute)."""
    sha256: str | None = None
    """SHA-256 of the bytes loaded."""
    size: int | None = None
    """Their length."""
    module: str | None = None
    """The module they were loaded as (``minirt.core``); none for ``opened``."""
    source_path: str | None = None
    """For ``bytecode`` from a source's cache: the source it claims to be compiled from."""
    early: bool = False
    """Imported before the probe started (site, other ``.pth``): hashed from the file then."""
    ppid: int | None = None
    """``start``: the parent process."""
    detail: str | None = None
    """``start``: the interpreter; ``error``: where the probe failed, and why."""


def read_mounted(log_path: Path) -> list[MountedFile]:
    """The records of a ``mounted.jsonl``, in file order; none if the file is missing.

    A last line without its newline is a write cut short (the process was killed, the disk
    filled) and is dropped; any other line that is not a record is refused (``ProofError``).

    **Usage**::

        records = read_mounted(trial / "mounted.jsonl")
        {r.pid for r in records if r.kind == "start"}     # the probed processes
    """
    path = Path(log_path)

    def refuse(number: int, why: str) -> ProofError:
        return ProofError(
            f"{path}: line {number} is not a probe record ({why}). "
            "Fix: the log is written only by the probe; give each trial a new log"
        )

    return read_jsonl(path, MountedFile, refuse)
