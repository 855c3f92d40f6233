"""The verdict of a mounted-byte proof: the bytes a trial's processes loaded, against the
arm's production manifest.

Definitions (``pbmount/1``; stored in results, so change them only with a new name):

- a record's *worktree path*: its path relative to the runtime root, or, through ``map``
  (longest prefix first), of an installed or container copy; none if it is elsewhere;
- ``mounted_hash``: SHA-256 of the canonical JSON of the sorted, distinct
  ``[path, sha256]`` pairs of ``source`` and ``extension`` loads whose worktree path is in
  the manifest (what ran of production; files merely opened are checked, not hashed, as
  tracebacks and logs open files at will);
- coverage ``loaded/total``: distinct manifest source files (``.py``; for Node ``.js``,
  ``.cjs``, ``.mjs``) compiled, over the manifest's source files (symlinks left out: a load
  is recorded under the real path).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pairbench._model import Frozen
from pairbench.proof._errors import MountMismatch
from pairbench.proof._records import MountedFile
from pairbench.source import Manifest
from pairbench.spec._canonical import canonical_json

Status = Literal["ok", "mismatch", "shadowed", "unavailable"]


class MountProblem(Frozen):
    """One file that breaks the proof."""

    reason: Literal["shadowed", "content", "unlisted", "bytecode"]
    """``shadowed``: a declared package loaded from outside the runtime; ``content``: bytes
    other than the manifest's; ``unlisted``: code under the root that is not production;
    ``bytecode``: a ``.pyc`` of the runtime ran instead of its source."""
    path: str
    """The worktree path, or the absolute path when there is none (``shadowed``)."""
    origin: str
    """The absolute path the process loaded."""
    module: str | None
    """The module it was loaded as."""
    expected_sha256: str | None
    """The manifest's SHA-256 of ``path``, if it lists it."""
    actual_sha256: str | None
    """The SHA-256 of the bytes loaded."""

    def describe(self) -> str:
        """One line naming the file and what is wrong with it."""
        if self.reason == "shadowed":
            return f"{self.module} shadowed: loaded from {self.origin}"
        if self.reason == "bytecode":
            return f"{self.path}: stale bytecode {self.origin} ran instead of the source"
        if self.reason == "unlisted":
            return f"{self.path}: loaded but not in the manifest (sha256 {self.actual_sha256})"
        return f"{self.path}: sha256 {self.actual_sha256}, manifest {self.expected_sha256}"


class MountVerdict(Frozen):
    """Whether the bytes a trial loaded are the arm's production bytes (``pbmount/1``).

    **Usage**::

        result = verdict(read_mounted(log), tree.manifest, Path(tree.path), ["minirt"])
        result.status, result.coverage       # ("ok", "3/5")
        require_mounted(result)              # MountMismatch on shadowed or mismatch
    """

    status: Status
    """``shadowed`` > ``mismatch`` > ``unavailable`` (no evidence, or the probe failed) > ``ok``."""
    summary: str
    """One line saying why."""
    manifest_sha256: str
    """The production manifest checked against."""
    mounted_hash: str | None
    """SHA-256 over the loaded production files (module docstring); none if none loaded."""
    loaded: int
    """Distinct manifest ``.py`` files compiled (coverage's k)."""
    total: int
    """The manifest's ``.py`` files (coverage's n)."""
    files: list[str]
    """The production files loaded, sorted."""
    problems: list[MountProblem]
    """Each file that breaks the proof, once."""
    unlisted_opened: list[str]
    """Files opened (not run) under the root that the manifest does not list: shown only."""
    processes: int
    """Probed processes (``start`` records)."""
    errors: list[str]
    """The probe's own failures (any makes the proof ``unavailable``)."""

    @property
    def coverage(self) -> str:
        """``loaded/total``, e.g. ``3/5``."""
        return f"{self.loaded}/{self.total}"


def verdict(
    mounted: Iterable[MountedFile],
    manifest: Manifest,
    runtime_root: Path | str,
    packages: Iterable[str],
    map: Mapping[str, str] | None = None,
    sources: tuple[str, ...] = (".py",),
) -> MountVerdict:
    """Check what a trial loaded (``read_mounted``) against the arm's production manifest.

    ``sources`` are the file endings coverage counts (``.py``; Node's ``.js``, ``.cjs``,
    ``.mjs``). ``map`` maps an absolute prefix as the probe recorded it (a venv's
    ``.../site-packages/minirt``, a container's ``/app``) to a worktree-relative prefix
    (``minirt``; ``""`` for the root).

    **Usage**::

        result = verdict(read_mounted(log), tree.manifest, Path(tree.path), ["minirt"],
                         map={"/venv/lib/python3.11/site-packages/minirt": "minirt"})
    """
    records = list(mounted)
    declared = set(packages)
    where = _Locator(Path(runtime_root), map or {})
    entries = {e.path: e for e in manifest.entries}
    problems: dict[tuple[str, str, str | None], MountProblem] = {}
    ran: set[tuple[str, str]] = set()
    unlisted: set[str] = set()

    def problem(reason: str, path: str, record: MountedFile) -> None:
        entry = entries.get(path)
        found = MountProblem.model_validate({
            "reason": reason, "path": path, "origin": record.path, "module": record.module,
            "expected_sha256": entry.sha256 if entry else None, "actual_sha256": record.sha256,
        })  # fmt: skip
        problems.setdefault((reason, path, record.sha256), found)

    for record in records:
        if record.path is None or record.sha256 is None:
            continue  # start, error
        rel = where.relative(record.path)
        top = (record.module or "").split(".")[0]
        if record.kind == "bytecode":
            claimed = where.relative(record.source_path) if record.source_path else None
            if rel is not None or claimed is not None or top in declared:
                problem("bytecode", claimed or rel or record.path, record)
        elif rel is None:
            if top in declared and record.kind in ("source", "extension"):
                problem("shadowed", record.path, record)
        elif rel not in entries:
            if record.kind == "opened":
                unlisted.add(rel)
            else:
                problem("unlisted", rel, record)
        else:
            if entries[rel].sha256 != record.sha256:
                problem("content", rel, record)
            if record.kind != "opened":
                ran.add((rel, record.sha256))

    python = [p for p, e in entries.items() if p.endswith(sources) and e.mode != "120000"]
    loaded = {path for path, _ in ran if path in python}
    found = sorted(problems.values(), key=lambda p: (p.reason, p.path, p.origin))
    errors = [r.detail or "" for r in records if r.kind == "error"]
    processes = len({r.pid for r in records if r.kind == "start"})
    status, summary = _status(found, records, ran, errors)
    pairs = sorted(ran)
    return MountVerdict(
        status=status,
        summary=summary,
        manifest_sha256=manifest.sha256,
        mounted_hash=hashlib.sha256(canonical_json([list(p) for p in pairs])).hexdigest()
        if pairs
        else None,
        loaded=len(loaded),
        total=len(python),
        files=sorted({path for path, _ in ran}),
        problems=found,
        unlisted_opened=sorted(unlisted),
        processes=processes,
        errors=errors,
    )


def _status(
    problems: list[MountProblem],
    records: list[MountedFile],
    ran: set[tuple[str, str]],
    errors: list[str],
) -> tuple[Status, str]:
    shadowed = [p for p in problems if p.reason == "shadowed"]
    if shadowed:
        return "shadowed", "; ".join(p.describe() for p in shadowed)
    if problems:
        return "mismatch", "; ".join(p.describe() for p in problems)
    if not records:
        return "unavailable", "no probe record: the probe did not run, or its log is missing"
    if errors:
        return "unavailable", f"the probe failed, so loads may be missing: {errors[0]}"
    if not ran:
        return "unavailable", "no production file was loaded by a probed process"
    return "ok", f"{len(ran)} production file(s) loaded with the manifest's bytes"


class _Locator:
    """Absolute paths (as the probe recorded them) to worktree-relative paths."""

    def __init__(self, root: Path, mapping: Mapping[str, str]) -> None:
        # The probe records real paths, so the host's root is compared as a real path too;
        # map keys may be container paths, which mean nothing here: only normalized.
        prefixes = {os.path.realpath(root): ""}
        prefixes.update({posixpath.normpath(k): v.strip("/") for k, v in mapping.items()})
        self._prefixes = sorted(prefixes.items(), key=lambda kv: -len(kv[0]))

    def relative(self, path: str) -> str | None:
        for prefix, target in self._prefixes:
            if path.startswith(prefix.rstrip("/") + "/"):
                rest = path[len(prefix.rstrip("/")) + 1 :]
                return posixpath.join(target, rest) if target else rest
        return None


def require_mounted(result: MountVerdict) -> None:
    """Raise ``MountMismatch`` naming the files if ``result`` is ``shadowed`` or ``mismatch``.

    ``unavailable`` does not raise: it invalidates the comparison, it does not stop the run.

    **Usage**::

        require_mounted(verdict(read_mounted(log), manifest, root, ["minirt"]))
    """
    if result.status in ("shadowed", "mismatch"):
        raise MountMismatch(result.problems)
