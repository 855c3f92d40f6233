"""The ledger beside the lock: an append-only, hash-chained record of what ran under it.

``experiment.ledger.jsonl`` sits next to ``experiment.lock.json`` and is committed with it.
Every freeze, plan approval and run start under the lock appends one line, from whatever
runs folder, so what the lock allows once (a held-out sitting, an approved plan's run) is
counted once across every folder and checkout that shares the committed ledger.

Each line is one :class:`LedgerEntry` as canonical JSON; its ``prev`` is the SHA-256 of the
line before it (64 zeros for the first) and ``seq`` its position, so an edited, removed or
torn line breaks the chain and every later use is refused, naming the line. Appends hold an
exclusive ``fcntl.flock`` on the ledger from the check to the write, so two runs starting
at once cannot both be "the first".

A lock written by this pairbench names its ledger (``Lock.ledger``): such a lock without
its ledger means the ledger was deleted, and is refused. A lock frozen before ledgers gets
one at its first use (an ``adopt`` line). A ledger that lost its last lines still chains; a
run's ``run.json`` names the line it appended (``LedgerRef``), so a run folder naming a
line the ledger no longer has is refused too (``check_heads``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from pairbench._clock import now_iso
from pairbench._errors import RunRefused
from pairbench._model import Frozen
from pairbench.freeze._hashing import LEDGER_NAME

GENESIS = "0" * 64
"""``prev`` of the first line."""
RESTORE = (
    "restore experiment.ledger.jsonl from version control (it is committed with the lock); "
    "if it is lost, re-freeze with `pairbench freeze EXPERIMENT --new-version X.Y.Z` (a new "
    "pre-registration, shown in every report)"
)

Kind = Literal["freeze", "adopt", "approval", "run"]


class LedgerError(RunRefused):
    """The ledger does not chain, is missing under a lock that names it, or lost lines."""


class LedgerEntry(Frozen):
    """One line of the ledger. Fields a kind does not use are left out of the line."""

    seq: int = Field(ge=0)
    """The line's position (0 the first)."""
    prev: str
    """SHA-256 of the previous line's bytes (newline included); 64 zeros for the first."""
    at: str
    """When the line was appended (UTC, ISO 8601)."""
    kind: Kind
    """``freeze`` (a lock written), ``adopt`` (a lock frozen before ledgers, first used),
    ``approval`` (a confirmation plan approved) or ``run`` (a run started under the lock)."""
    lock_sha256: str
    """SHA-256 of ``experiment.lock.json`` as it was when the line was appended."""
    protocol_version: str
    """The protocol's version in force (``freeze --new-version`` sets a new one)."""
    canonical_hash: str | None = None
    """The experiment's canonical hash (freeze, adopt, approval)."""
    plan_sha256: str | None = None
    """The plan approved (approval), or followed (a confirmation run)."""
    plan_file: str | None = None
    """The plan file as given to ``approve``."""
    by: str | None = None
    """The approver (approval)."""
    approved_at: str | None = None
    """The approval's time, as the plan file records it (approval)."""
    screening_run: str | None = None
    """The screening run the approved plan came from (approval)."""
    endpoint: dict[str, Any] | None = None
    """The model endpoint's identity: the proxy's upstream URL, what the proxied server
    reports of itself, the local model server (approval: the screening's; run: the run's)."""
    run_id: str | None = None
    """The run started (run)."""
    runs_dir: str | None = None
    """The runs folder it started in, as given (run)."""
    stage: str | None = None
    """``screening`` or ``confirmation`` for a campaign run (run)."""
    case_set: str | None = None
    """The run's case set (run)."""
    sitting: int | None = None
    """Which sitting of the held-out set under this protocol version (a held-out run)."""
    accepted_changes: list[str] | None = None
    """What the run accepted as changed since freeze (``--accept-change``)."""
    previous_lock_sha256: str | None = None
    """The lock this freeze replaced (freeze)."""
    imported_logs: dict[str, str] | None = None
    """For an import under a frozen analysis (``pairbench import --experiment``): each log's
    absolute path and its SHA-256 as imported (run)."""

    def line(self) -> bytes:
        """The entry's line: canonical JSON (sorted keys, no spaces, Nones left out)."""
        data = self.model_dump(mode="json", exclude_none=True)
        return (json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n").encode()


def shipped(folder: Path) -> bool:
    """Whether ``folder`` lies inside pairbench's own package: a built-in study run or
    frozen in place (``pairbench demo``, ``make locks``). It keeps no ledger there: that
    folder may be read-only, and is not the team's pre-registration (``pairbench init``
    copies it into one)."""
    package = Path(__file__).resolve().parents[1]
    return Path(folder).resolve().is_relative_to(package)


def ledger_path(lock_file: Path) -> Path:
    """The ledger beside ``lock_file``."""
    return lock_file.parent / LEDGER_NAME


def line_sha256(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def _refuse(path: Path, seq: int, why: str) -> LedgerError:
    return LedgerError(f"{path}: line {seq + 1} {why}; the ledger no longer chains. Fix: {RESTORE}")


def read_ledger(path: Path) -> list[LedgerEntry]:
    """Every entry of the ledger at ``path``, its chain checked (``[]`` when absent).

    Raises:
        LedgerError: a line is not an entry (edited, torn), or its ``seq`` or ``prev``
            does not follow the line before it.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    entries: list[LedgerEntry] = []
    prev = GENESIS
    lines = data.splitlines(keepends=True)
    for seq, line in enumerate(lines):
        if not line.endswith(b"\n"):
            raise _refuse(path, seq, "is torn (no newline)")
        try:
            entry = LedgerEntry.model_validate_json(line)
        except ValidationError:
            raise _refuse(path, seq, "is not a ledger entry") from None
        if entry.line() != line:
            raise _refuse(path, seq, "is not as pairbench wrote it (edited)")
        if entry.seq != seq or entry.prev != prev:
            raise _refuse(path, seq, "does not follow the line before it")
        entries.append(entry)
        prev = line_sha256(line)
    return entries


class Ledger:
    """An open ledger, flock held: read once, checked, appended to (``open_ledger``)."""

    def __init__(self, path: Path, entries: list[LedgerEntry], fd: int) -> None:
        self.path = path
        self.entries = entries
        self._fd = fd

    @property
    def first_line_sha256(self) -> str | None:
        return line_sha256(self.entries[0].line()) if self.entries else None

    def protocol_version(self, default: str) -> str:
        """The protocol version in force: the last freeze's or adoption's, else ``default``."""
        for entry in reversed(self.entries):
            if entry.kind in ("freeze", "adopt"):
                return entry.protocol_version
        return default

    def versions(self) -> set[str]:
        return {e.protocol_version for e in self.entries}

    def sittings(self, version: str) -> list[LedgerEntry]:
        """The held-out runs started under protocol ``version``."""
        return [
            e
            for e in self.entries
            if e.kind == "run" and e.case_set == "held-out" and e.protocol_version == version
        ]

    def approvals(self, screening_run: str | None = None) -> list[LedgerEntry]:
        return [
            e
            for e in self.entries
            if e.kind == "approval" and (screening_run is None or e.screening_run == screening_run)
        ]

    def runs_of_plan(self, plan_sha256: str) -> list[LedgerEntry]:
        return [e for e in self.entries if e.kind == "run" and e.plan_sha256 == plan_sha256]

    def run(self, run_id: str) -> LedgerEntry | None:
        return next((e for e in self.entries if e.kind == "run" and e.run_id == run_id), None)

    def entry(
        self, kind: Kind, lock_sha256: str, protocol_version: str, **fields: Any
    ) -> LedgerEntry:
        """The next entry (not yet appended)."""
        prev = line_sha256(self.entries[-1].line()) if self.entries else GENESIS
        return LedgerEntry(
            seq=len(self.entries),
            prev=prev,
            at=now_iso(),
            kind=kind,
            lock_sha256=lock_sha256,
            protocol_version=protocol_version,
            **fields,
        )

    def append(self, entry: LedgerEntry) -> str:
        """Append ``entry`` (made by :meth:`entry`), durably; return its line's SHA-256."""
        if entry.seq != len(self.entries):
            raise LedgerError(f"{self.path}: entry {entry.seq} is not the next line")
        line = entry.line()
        os.lseek(self._fd, 0, os.SEEK_END)
        os.write(self._fd, line)
        os.fsync(self._fd)
        self.entries.append(entry)
        return line_sha256(line)


@contextlib.contextmanager
def open_ledger(path: Path, *, must_exist: bool) -> Iterator[Ledger]:
    """The ledger at ``path``, read and checked under an exclusive flock held until exit.

    ``must_exist``: the lock names its ledger, so a missing one was deleted (refused).
    The flock is taken on the ledger file itself (created empty when absent and allowed),
    so readers that only check it (``read_ledger``) need no lock: lines are whole-appended.
    """
    if must_exist and not path.is_file():
        raise LedgerError(
            f"{path} is missing, but the lock beside it was frozen with a ledger: it was "
            f"deleted or never committed. Fix: {RESTORE}"
        )
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        entries = read_ledger(path)
        ledger = Ledger(path, entries, fd)
        try:
            yield ledger
        finally:
            if not ledger.entries and os.fstat(fd).st_size == 0:
                # Opened to check, nothing appended: leave no empty ledger behind.
                with contextlib.suppress(OSError):
                    path.unlink()
    finally:
        os.close(fd)  # releases the flock


def check_heads(ledger: Ledger, runs_dir: Path | None) -> None:
    """Refuse when a run names a line of this ledger it no longer has: the ledger was
    truncated, or a line edited, after that run started. The runs looked at are those in
    ``runs_dir`` and in every runs folder the ledger's own run lines name, so the last line
    (which no later line chains) is anchored by its run's folder too."""
    mine = ledger.path.resolve()
    folders = {Path(e.runs_dir) for e in ledger.entries if e.kind == "run" and e.runs_dir}
    if runs_dir is not None:
        folders.add(runs_dir)
    for folder in sorted(folders):
        for info_path in sorted(folder.glob("*/run.json")) if folder.is_dir() else []:
            _check_head(ledger, mine, info_path)


def _check_head(ledger: Ledger, mine: Path, info_path: Path) -> None:
    try:
        ref = json.loads(info_path.read_bytes()).get("ledger")
    except (OSError, ValueError, AttributeError):
        return  # damaged run.json: verify and report name it
    if not isinstance(ref, dict):
        return
    seq, file = ref.get("seq"), ref.get("file")
    if not isinstance(seq, int) or not isinstance(file, str) or Path(file).resolve() != mine:
        return  # another experiment's ledger
    have = ledger.entries[seq].line() if 0 <= seq < len(ledger.entries) else None
    if have is None or line_sha256(have) != ref.get("line_sha256"):
        raise LedgerError(
            f"{ledger.path} has no line {seq + 1} as run {info_path.parent.name} appended it "
            f"({info_path}): the ledger lost or changed lines after that run started. "
            f"Fix: {RESTORE}"
        )
