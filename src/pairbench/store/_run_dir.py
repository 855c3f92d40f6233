"""``runs/<run-id>/``: where a run keeps its plan, journal, results and transcripts."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pairbench._atomic import fsync_dir, write_atomic
from pairbench._collector import no_cyclic_collection
from pairbench._errors import RunDirError
from pairbench.schedule._plan import TrialKey
from pairbench.store._commit import PutFile
from pairbench.store._events import JournalEvent
from pairbench.store._journal import Journal, record_extent
from pairbench.store._lock import process_alive, try_writer_lock, writer_lock
from pairbench.store._records import TrialResult, first_error
from pairbench.store._redact import Redactor

_STAGING = re.compile(r"^\.(?P<run_id>.+)\.tmp-(?P<pid>\d+)$")
"""``.<run-id>.tmp-<pid>``: a new run folder before it is renamed to ``<run-id>``."""


def new_run_id(experiment: str) -> str:
    """A fresh run ID: experiment, UTC time and 6 random hex digits (never reused)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{experiment}-{stamp}-{secrets.token_hex(3)}"


def _dump(model: TrialResult) -> bytes:
    return (model.model_dump_json(indent=2) + "\n").encode("utf-8")


class RunDir:
    """One run directory. Results are written once and never overwritten."""

    def __init__(self, path: Path) -> None:
        # Absolute: agents run in folders of their own, where a relative path means another
        # place (a CLI handed runs/<id>/work/.../mcp.json would look for it inside its cwd).
        self.path = path.absolute()
        # The per-attempt paths below are built from this text: one Path made from one
        # string, not a chain of joins (pathlib's are ~2 us each, ten-odd per attempt).
        self._root = str(self.path)
        self._fixtures_root = Path(f"{self._root}/fixtures")

    @classmethod
    def create(
        cls, runs_dir: Path, run_id: str, files: Mapping[str, bytes] | None = None
    ) -> RunDir:
        """A new run folder holding ``files``, made atomically (see :meth:`create_locked`)."""
        with cls.create_locked(runs_dir, run_id, files or {}, command="pairbench") as run_dir:
            return run_dir

    @classmethod
    @contextlib.contextmanager
    def create_locked(
        cls, runs_dir: Path, run_id: str, files: Mapping[str, bytes], *, command: str
    ) -> Iterator[RunDir]:
        """Make ``runs_dir/run_id`` atomically; be its writer (:meth:`writer_lock`) in the block.

        The folder is built as ``.<run-id>.tmp-<pid>``: its lock taken, ``files`` (run.json,
        lock.json) written and fsynced, then renamed once to its final name and the rename
        fsynced. A run folder under its own name therefore always has its plan on disk; a
        kill before the rename leaves only a dot-folder, which :meth:`open` refuses and
        :meth:`clear_abandoned` removes.

        **Usage**::

            files = {"run.json": data}
            with RunDir.create_locked(runs, run_id, files, command="pairbench run") as rd:
                ...  # rd.path == runs / run_id, locked until the block ends
        """
        final = runs_dir / run_id
        if final.exists():
            raise RunDirError(f"{final} already exists; a run is never overwritten")
        made_runs_dir = not runs_dir.is_dir()
        runs_dir.mkdir(parents=True, exist_ok=True)
        if made_runs_dir:
            fsync_dir(runs_dir.absolute().parent)
        staging = runs_dir / f".{run_id}.tmp-{os.getpid()}"
        staging.mkdir()
        published = False
        try:
            # The lock lives in the folder's inode, so it moves with the rename: the run is
            # never visible under its name without its writer holding it.
            with writer_lock(staging, command):
                for name, data in files.items():
                    write_atomic(staging / name, data)
                fsync_dir(staging)
                if final.exists():
                    # rename() would replace an empty folder of that name in silence.
                    raise RunDirError(f"{final} already exists; a run is never overwritten")
                os.rename(staging, final)
                published = True
                fsync_dir(runs_dir)
                yield cls(final)
        finally:
            if not published:
                shutil.rmtree(staging, ignore_errors=True)

    @staticmethod
    def is_unstarted(path: Path) -> bool:
        """True for ``.<run-id>.tmp-<pid>``: a run folder whose creation never finished."""
        return _STAGING.match(path.name) is not None

    @staticmethod
    def clear_abandoned(runs_dir: Path) -> list[Path]:
        """Remove the unstarted run folders of dead processes; return what was removed.

        A folder is removed only when the process named in it is gone and no process holds
        its lock (a folder of a live ``run`` mid-creation is left alone).
        """
        removed: list[Path] = []
        for path in sorted(runs_dir.glob(".*.tmp-*")) if runs_dir.is_dir() else []:
            found = _STAGING.match(path.name)
            if not found or not path.is_dir() or process_alive(int(found["pid"])):
                continue
            with try_writer_lock(path, "pairbench run (clearing an unstarted run)") as mine:
                if mine:
                    shutil.rmtree(path, ignore_errors=True)
                    removed.append(path)
        return removed

    @classmethod
    def open(cls, path: Path) -> RunDir:
        if cls.is_unstarted(path):
            raise RunDirError(
                f"{path} is a run that was stopped before it started (its folder was never "
                "given its name); nothing ran in it. Start a new run instead"
            )
        if not (path / "run.json").is_file():
            raise RunDirError(
                f"{path} is not a pairbench run directory (no run.json); "
                "pass the folder that `pairbench run` printed"
            )
        return cls(path)

    # -- paths ---------------------------------------------------------------------------
    @property
    def run_json(self) -> Path:
        return self.path / "run.json"

    @property
    def journal_path(self) -> Path:
        return self.path / "journal.jsonl"

    def result_path(self, key: TrialKey) -> Path:
        return Path(f"{self._root}/results/{key.arm}/{key.task}/{key.trial}.json")

    def transcript_path(self, key: TrialKey) -> Path:
        return Path(f"{self._root}/transcripts/{key.arm}/{key.task}/{key.trial}.jsonl")

    def working_transcript(self, key: TrialKey, attempt: int) -> Path:
        """Where an attempt's transcript streams before the attempt's fate is known."""
        return Path(f"{self._root}/transcripts/{key.arm}/{key.task}/{key.trial}.{attempt}.partial")

    def kept_path(self, kind: str, key: TrialKey, attempt: int, suffix: str) -> Path:
        """``infra/`` or ``interrupted/``: attempts that are kept but are not the trial's result."""
        return Path(f"{self._root}/{kind}/{key.arm}/{key.task}/{key.trial}.{attempt}{suffix}")

    def trial_shared(self, key: TrialKey) -> Path:
        """``shared/<task>/<trial>/``: what one trial's arms share (made once, by the first
        attempt that needs it, e.g. a recorded evidence package); the arm is not in it."""
        return Path(f"{self._root}/shared/{key.task}/{key.trial}")

    def workspace_manifest(self, key: TrialKey, attempt: int) -> Path:
        """Beside the attempt's work folder: its files' manifest, once over its cap
        (``store._workspace``)."""
        return Path(self.workspace_manifest_text(key, attempt))

    def workspace_manifest_text(self, key: TrialKey, attempt: int) -> str:
        """:meth:`workspace_manifest` as text (what a stat takes, no Path made)."""
        return f"{self._root}/work/{self.fixture_rel(key, attempt)}.manifest.json"

    def work_folder(self, rel: str) -> Path:
        """``work/<rel>``: an attempt's work folder (``rel``: :meth:`fixture_rel`)."""
        return Path(f"{self._root}/work/{rel}")

    def fixture_rel(self, key: TrialKey, attempt: int) -> str:
        """The attempt's fixture folder, relative to ``fixtures_root``."""
        return f"{key.arm}/{key.task}/{key.trial}.{attempt}"

    def fixture_folder(self, rel: str) -> Path:
        """``fixtures/<rel>``: an attempt's fixture folder (``rel``: :meth:`fixture_rel`)."""
        return Path(f"{self._root}/fixtures/{rel}")

    @property
    def fixtures_root(self) -> Path:
        return self._fixtures_root

    def writer_lock(self, command: str) -> contextlib.AbstractContextManager[None]:
        """Be this run's only writer for the block, or raise ``RunInUse`` at once.

        ``run``, ``resume`` and ``report`` take it; readers never do. ``command`` (e.g.
        ``"pairbench resume"``) is what a refused writer is told the holder is doing.

        **Usage**::

            with RunDir.open(path).writer_lock("pairbench resume"):
                ...
        """
        return writer_lock(self.path, command)

    # -- run.json ------------------------------------------------------------------------
    @staticmethod
    def encode_run_json(data: dict[str, Any]) -> bytes:
        """run.json's bytes, for :meth:`create_locked`: run.json is written once, with the
        folder, and never rewritten (what changes later is a journal event)."""
        return (json.dumps(data, indent=2, sort_keys=True, default=str) + "\n").encode("utf-8")

    def read_run_json(self) -> dict[str, Any]:
        try:
            text = self.run_json.read_text(encoding="utf-8")
            with no_cyclic_collection():  # a dict per planned pair: see _collector
                data: dict[str, Any] = json.loads(text)
        except (OSError, json.JSONDecodeError) as exc:
            raise RunDirError(f"{self.run_json}: cannot read run.json ({exc})") from exc
        return data

    # -- results -------------------------------------------------------------------------
    def write_result(self, key: TrialKey, result: TrialResult) -> str:
        """Write the trial's one final result; refuses to overwrite. Returns its SHA-256."""
        return write_atomic(self.result_path(key), _dump(result), overwrite=False)

    def write_kept(self, kind: str, key: TrialKey, result: TrialResult) -> str:
        return write_atomic(self.kept_path(kind, key, result.attempt, ".json"), _dump(result))

    def stage_result(self, key: TrialKey, result: TrialResult) -> PutFile:
        """:meth:`write_result` as a file for the group committer (``_commit.py``) to write."""
        return PutFile(self.result_path(key), _dump(result), overwrite=False)

    def stage_record(
        self, key: TrialKey, result: TrialResult, kept: str | None, redactor: Redactor
    ) -> tuple[PutFile, TrialResult]:
        """An attempt's record as the group committer writes it, every secret value
        redacted: (the file, the result as stored). ``kept``: ``infra`` or ``interrupted``
        for an attempt kept beside the final one, None for the final result.

        The file's bytes are searched, not a second dump of the record: one serialization
        per attempt when nothing is secret (the common case). A hit redacts the record's
        strings (never its JSON text, which a value holding a quote could cut across).
        """
        data = _dump(result)
        if redactor.found_bytes(data):
            result = TrialResult.model_validate(
                redactor.redact_data(result.model_dump(mode="json"))
            )
            data = _dump(result)
        if kept is None:
            return PutFile(self.result_path(key), data, overwrite=False), result
        return PutFile(self.kept_path(kept, key, result.attempt, ".json"), data, True), result

    def has_result(self, key: TrialKey) -> bool:
        return self.result_path(key).is_file()

    def _load_all(self, folder: str) -> list[TrialResult]:
        root = self.path / folder
        if not root.is_dir():
            return []
        out = []
        for file in sorted(root.rglob("*.json")):
            try:
                out.append(TrialResult.model_validate_json(file.read_bytes()))
            except ValidationError as exc:  # one line: the first problem, not pydantic's list
                raise RunDirError(
                    f"{file}: not a valid pairbench result ({first_error(exc)}). Fix: restore "
                    "it from a backup (the journal holds its SHA-256: `pairbench verify` checks it)"
                ) from None
            except OSError as exc:
                raise RunDirError(f"{file}: cannot read it ({exc.strerror or exc})") from None
        return out

    def results(self) -> list[TrialResult]:
        return self._load_all("results")

    def infra_attempts(self) -> list[TrialResult]:
        return self._load_all("infra")

    def interrupted_attempts(self) -> list[TrialResult]:
        return self._load_all("interrupted")

    def genesis(self) -> str:
        """run.json's SHA-256: the journal's first link (see ``_journal.py``)."""
        try:
            return hashlib.sha256(self.run_json.read_bytes()).hexdigest()
        except OSError as exc:
            raise RunDirError(f"{self.run_json}: cannot read run.json ({exc})") from exc

    def journal(self) -> Journal:
        return Journal(self.journal_path, self.genesis())

    def journal_head(self) -> str:
        """What a report or a table is built from: the hash of the journal's last line,
        leaving out the report's trailing record of its own files (``record_extent``)."""
        return self.journal_extent()[0]

    def journal_extent(self) -> tuple[str, int]:
        """(head, length in bytes) of the journal as :meth:`journal_head` counts it."""
        try:
            return record_extent(self.journal_path, self.genesis())
        except OSError as exc:  # a folder where the journal should be, or unreadable
            raise RunDirError(
                f"{self.journal_path}: cannot read the journal ({exc.strerror or exc}). Fix: "
                "restore it from a backup; it is the run's record"
            ) from None

    def journal_events(self) -> list[JournalEvent]:
        """Every journal line, as its model (``_events.py``)."""
        return Journal.read(self.journal_path)
