"""Per-trial state of the tracker server: the store, its persistence and the audit log.

A stdio server holds one ``TrialStore`` (its trial comes from the environment); the warm
HTTP server holds one per ``x-pairbench-trial`` header, under ``PAIRBENCH_FIXTURE_ROOT``.
Files in the trial's fixture dir: ``store.json`` (atomic rewrite after every mutation and
once at first touch) and ``audit.jsonl`` (one ``AuditEntry`` per call).
"""

from __future__ import annotations

import copy
import json
import os
import threading
from pathlib import Path, PurePosixPath
from typing import Any

from pairbench.studies.mcp_transports._content import generate

STORE_FILE = "store.json"
AUDIT_FILE = "audit.jsonl"


class TrialError(ValueError):
    """The request does not name a usable trial (bad header, missing seed)."""


def initial_store(seed: int) -> dict[str, Any]:
    """The store a trial starts from: the seeded repositories, nothing deleted."""
    content = generate(seed)
    return {"seed": seed, "repos": copy.deepcopy(content["repos"]), "deleted": []}


def resolve_trial_dir(root: Path, rel: str) -> Path:
    """``root / rel``, refusing anything that could leave ``root``.

    **Usage**::

        resolve_trial_dir(Path("/runs/r1/fixtures"), "local-stdio/read-issue-title/0")
    """
    if not rel or "\\" in rel or "\x00" in rel:
        raise TrialError(f"invalid trial path {rel!r}")
    pure = PurePosixPath(rel)
    if pure.is_absolute() or any(part in ("..", "") for part in pure.parts):
        raise TrialError(f"trial path must be relative and stay under the root: {rel!r}")
    base = root.resolve()
    path = (base / pure).resolve()
    if not path.is_relative_to(base) or path == base:
        raise TrialError(f"trial path leaves the fixture root: {rel!r}")
    return path


class TrialStore:
    """One trial's mutable tracker, guarded by a lock (sync tools run in worker threads)."""

    def __init__(self, fixture_dir: Path, seed: int) -> None:
        self.dir = fixture_dir
        self.seed = seed
        self.lock = threading.Lock()
        self.dir.mkdir(parents=True, exist_ok=True)
        existing = self.dir / STORE_FILE
        if existing.exists():
            # A restarted server (or a second session of the same trial) continues the trial.
            self.store: dict[str, Any] = json.loads(existing.read_text(encoding="utf-8"))
        else:
            self.store = initial_store(seed)
            self.persist()

    def persist(self) -> None:
        """Atomically rewrite ``store.json`` (temp file, fsync, rename)."""
        tmp = self.dir / f".{STORE_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
        with tmp.open("w", encoding="utf-8") as fh:
            json.dump(self.store, fh, ensure_ascii=False, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.dir / STORE_FILE)

    def audit(
        self, tool: str, arguments: dict[str, Any], ok: bool, error: str | None, server_ms: float
    ) -> None:
        """Append one audit line (an ``AuditEntry``)."""
        line = {
            "tool": tool,
            "arguments": arguments,
            "ok": ok,
            "error": error,
            "server_ms": round(server_ms, 3),
        }
        with (self.dir / AUDIT_FILE).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
            fh.flush()


class TrialRegistry:
    """Trial stores by fixture dir; one warm server serves many trials at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._trials: dict[Path, TrialStore] = {}

    def get(self, fixture_dir: Path, seed: int) -> TrialStore:
        with self._lock:
            trial = self._trials.get(fixture_dir)
            if trial is None:
                trial = self._trials[fixture_dir] = TrialStore(fixture_dir, seed)
            elif trial.seed != seed:
                raise TrialError(f"trial {fixture_dir.name!r} was started with another seed")
            return trial
