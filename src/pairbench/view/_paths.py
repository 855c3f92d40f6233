"""Which files the view may read, and the only way its links are built.

Every URL the view serves names a run, an arm, a task or a trial by path segment, and every
segment becomes a path under RUNS_DIR. A segment is accepted only when it is a plain name
(:func:`is_segment`): no separator, no ``..``, no leading dot, nothing absolute. A name that
is not (say an arm a damaged run.json gives as ``<script>``) is shown as text, never linked
and never turned into a path. Every path is then resolved and must stay inside its run, so
a symlink planted in a run folder cannot lead the view outside it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

from pairbench._errors import RunDirError
from pairbench.store._run_dir import RunDir

_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
"""Run ids (``mcp-transports-20261203T091037Z-355d6a``) and safe arm and task ids."""


class NotFound(Exception):
    """What a URL names does not exist (or is not a name the view accepts): a 404."""


def is_segment(value: object) -> bool:
    """Whether ``value`` may be a path segment of a URL and of a path under RUNS_DIR.

    >>> [is_segment(s) for s in ("run-1", "a.b_c", "..", "a..b", ".hidden", "a/b", "/etc")]
    [True, True, False, False, False, False, False]
    """
    return isinstance(value, str) and bool(_SEGMENT.match(value)) and ".." not in value


def link(*segments: str | int, query: Mapping[str, str] | None = None) -> str | None:
    """The URL ``/seg/seg/...?query``, or None when any segment is not a plain name.

    Templates link only through this, so nothing an agent wrote can become a link target.

    >>> link("runs", "r1", "trials", "arm", "task", 0)
    '/runs/r1/trials/arm/task/0'
    >>> link("runs", "javascript:alert(1)") is None
    True
    >>> link("compare", query={"a": "r1", "b": ""})
    '/compare?a=r1'
    """
    parts = [str(s) for s in segments]
    if not all(is_segment(p) for p in parts):
        return None
    url = "/" + "/".join(quote(p, safe="") for p in parts)
    wanted = {k: v for k, v in (query or {}).items() if v}
    return f"{url}?{urlencode(wanted)}" if wanted else url


def inside(base: Path, path: Path) -> bool:
    """Whether ``path``, symlinks resolved, is ``base`` or lies under it."""
    try:
        return path.resolve().is_relative_to(base.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


@dataclass(frozen=True)
class RunsRoot:
    """RUNS_DIR: the folder whose run folders the view shows.

    **Usage**::

        root = RunsRoot.open(Path("runs"))
        root.run_ids()            # ['mcp-transports-20261203T091037Z-355d6a', ...]
        root.run_path(run_id)     # Path, or NotFound
    """

    path: Path

    @classmethod
    def open(cls, runs_dir: Path) -> RunsRoot:
        """RUNS_DIR, checked: raises ``RunDirError`` naming it and the fix."""
        if not runs_dir.exists():
            raise RunDirError(
                f"{runs_dir}: no such folder. Fix: pass the folder your runs are in "
                "(`pairbench view path/to/runs`), or make one with `pairbench demo`"
            )
        if not runs_dir.is_dir():
            raise RunDirError(
                f"{runs_dir}: not a folder. Fix: pass the folder your run folders are in"
            )
        if (runs_dir / "run.json").is_file():
            raise RunDirError(
                f"{runs_dir} is one run, not a folder of runs. Fix: pass its parent "
                f"(`pairbench view {runs_dir.parent}`)"
            )
        return cls(runs_dir.resolve())

    def run_ids(self) -> list[str]:
        """The run folders directly under RUNS_DIR, by name (unstarted dot-folders left out)."""
        try:
            children = sorted(self.path.iterdir())
        except OSError:
            return []
        return [
            child.name
            for child in children
            if is_segment(child.name)
            and not RunDir.is_unstarted(child)
            and (child / "run.json").is_file()
            and inside(self.path, child)
        ]

    def run_path(self, run_id: str) -> Path:
        """The run folder named ``run_id``; raises ``NotFound`` for anything else."""
        if not is_segment(run_id):
            raise NotFound(f"no run named {run_id!r}")
        path = self.path / run_id
        if not (path / "run.json").is_file() or not inside(self.path, path):
            raise NotFound(f"no run named {run_id!r} in {self.path}")
        return path


def run_file(run: Path, *parts: str) -> Path | None:
    """``run/part/part/...`` when every part is a plain name and it stays in the run."""
    if not all(is_segment(p) for p in parts):
        return None
    path = run.joinpath(*parts)
    return path if inside(run, path) else None
