"""The append-only journal: one fsynced JSON line per event; a torn last line is dropped.

The journal is a hash chain. Every line starts with ``"prev"``, the SHA-256 of the line
before it (of its bytes, newline included); the first line's ``prev`` is the SHA-256 of
``run.json``. So the last line's hash (the *head*) pins run.json and every line: a report,
a summary or ``trials.npz`` that records the head it was built from names exactly which
record it counted, and ``pairbench verify`` finds an edited, inserted or deleted line by
the first link that does not hold.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pairbench._errors import RunDirError
from pairbench.store._events import _KNOWN, EVENT_ADAPTER, JournalEvent, encode

_FIX = (
    "Fix: restore the journal from a backup, or delete that line (`pairbench verify` then "
    "lists the files it named as unjournaled)"
)


def json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type: object, array, string, number, ... null."""
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return kinds.get(type(value), "number")


def _line_problem(exc: ValidationError) -> str:
    """What makes a line not an event, on one line."""
    err = exc.errors(include_url=False)[0]
    loc = [str(part) for part in err["loc"]]
    if loc and (loc[0] == "other" or loc[0] in _KNOWN):
        loc = loc[1:]  # the union member's tag: the event's name, not a field
    if err["type"] in ("model_type", "model_attributes_type", "dict_type") and not loc:
        return f"a JSON {json_kind(err['input'])}, not an event object"
    if loc == ["event"]:
        return "an object without an 'event' name"
    what = str(err["msg"]).removeprefix("Input ")
    return f"'{'.'.join(loc)}' {what}" if loc else what


_PREV = re.compile(rb'^\{"prev": "([0-9a-f]{64})", ')
"""A chained line's start: the hash of the line before it, spliced in front of the event."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chain(head: str, bodies: list[bytes]) -> tuple[bytes, str]:
    """``bodies`` (lines from :meth:`Journal.encode`) linked after ``head``: (bytes, new head).

    The link is spliced in front of each encoded event rather than re-encoding it: one hash
    per line is all the chain costs on the hot path.
    """
    out = []
    for body in bodies:
        line = b'{"prev": "' + head.encode("ascii") + b'", ' + body[1:]
        head = sha256_hex(line)
        out.append(line)
    return b"".join(out), head


def _lines_from_end(path: Path) -> Iterator[tuple[int, bytes]]:
    """The journal's complete lines (newline included) from the last, each with its offset;
    a torn tail is skipped. Read in blocks from the end, so finding a run's head does not
    read a million-line journal."""
    with path.open("rb") as handle:
        pos = handle.seek(0, os.SEEK_END)
        buf = b""
        whole = False  # the torn tail (bytes after the last newline) is cut off
        while True:
            if not whole:
                cut = buf.rfind(b"\n")
                if cut >= 0:
                    buf, whole = buf[: cut + 1], True
                elif pos == 0:
                    return
            if whole:
                while buf and (start := buf.rfind(b"\n", 0, len(buf) - 1)) >= 0:
                    yield pos + start + 1, buf[start + 1 :]
                    buf = buf[: start + 1]
                if pos == 0:
                    if buf:
                        yield 0, buf
                    return
            step = min(pos, 65536)
            pos -= step
            handle.seek(pos)
            buf = handle.read(step) + buf


def last_line(path: Path) -> bytes | None:
    """The journal's last complete line (newline included), or None when it has none."""
    for _, line in _lines_from_end(path):
        return line
    return None


def _report_record(line: bytes) -> bool:
    """A ``files_recorded`` line the report wrote about its own files."""
    if b'"files_recorded"' not in line:
        return False
    try:
        data = json.loads(line)
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and data.get("event") == "files_recorded"
        and (data.get("by") == REPORT_WRITER)
    )


REPORT_WRITER = "report"
"""``files_recorded.by`` of the report's own files: the lines a report's head skips."""


def record_extent(path: Path, genesis: str) -> tuple[str, int]:
    """(head, length) of the journal without its trailing report records: the hash of the
    last line that is not the report's record of its own files, and the bytes up to it.

    A report names the head it was built from, then records its files' hashes; so a report
    (and the trial table) must name the journal as it was before those lines, or every
    report would stale the one before it.
    """
    if not path.exists():
        return genesis, 0
    for offset, line in _lines_from_end(path):
        if not _report_record(line):
            return sha256_hex(line), offset + len(line)
    return genesis, 0


class Journal:
    """``journal.jsonl``: attempt started / finished with hashes, run started / stopped.

    **Usage**::

        j = Journal(run_dir / "journal.jsonl", genesis=run_json_sha256)
        j.append(AttemptStarted(key="baseline/t1/0", attempt=1))
        j.close()
        Journal.read(run_dir / "journal.jsonl")   # -> [AttemptStarted(...)], torn tail dropped

    Every line is a model of ``_events.py`` (``JOURNAL_SCHEMA.md``).
    """

    def __init__(self, path: Path, genesis: str | None = None) -> None:
        """``genesis``: the SHA-256 of the run's run.json, the first line's link (an
        empty string's hash when not given: a journal of no run, as in unit tests)."""
        self.path = path
        self._repair_tail()
        line = last_line(path) if path.exists() else None
        self.head = (genesis or sha256_hex(b"")) if line is None else sha256_hex(line)
        """The hash of the last line written: the next line's ``prev``."""
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _repair_tail(self) -> None:
        # A crash mid-write can leave a partial last line. Cut it off before appending,
        # or the next event would be glued onto it and both would be lost.
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with self.path.open("r+b") as handle:
                handle.truncate(keep)
                handle.flush()
                os.fsync(handle.fileno())

    @staticmethod
    def encode(event: BaseModel) -> bytes:
        """One event (a model of ``_events.py``) as its journal line, not yet linked
        (:meth:`write_lines` links it: the chain's order is the order lines reach the file)."""
        return encode(event)

    def append(self, event: BaseModel) -> None:
        """Write one event line and fsync it before returning."""
        self.write_lines([encode(event)])

    def write_lines(self, bodies: list[bytes]) -> None:
        """Link encoded lines onto the chain, append them and fsync before returning (one
        fsync for all).

        The group committer (``_commit.py``) writes a batch of lines this way; a crash in
        the middle leaves whole lines and at most one torn last line, which readers drop.
        If the write or fsync fails (disk full, I/O error), the file is cut back to where
        it was before raising: the process may go on appending (recording interrupted
        attempts), and a torn fragment in the middle would make the journal unreadable.
        """
        data, head = chain(self.head, bodies)
        start = os.lseek(self._fd, 0, os.SEEK_END)
        view = memoryview(data)
        try:
            while view:
                # A regular file takes the whole write unless the disk fills up or a
                # signal lands mid-way; then write the rest rather than tear a line.
                view = view[os.write(self._fd, view) :]
            os.fsync(self._fd)
        except BaseException:
            os.ftruncate(self._fd, start)
            raise
        self.head = head

    def close(self) -> None:
        os.close(self._fd)

    @staticmethod
    def read(path: Path) -> list[JournalEvent]:
        """Every complete event, as its model; a torn or unparsable last line is dropped.

        Raises ``RunDirError`` naming the file and line when any other line is not an
        event: the journal is written whole lines at a time, so that is damage, not a crash.
        """
        if not path.exists():
            return []
        try:
            lines = path.read_bytes().split(b"\n")
        except OSError as exc:
            raise RunDirError(
                f"{path}: cannot read the journal ({exc.strerror or exc}). Fix: restore it "
                "from a backup; it is the run's record"
            ) from None
        events: list[JournalEvent] = []
        validate = EVENT_ADAPTER.validate_json
        for index, raw in enumerate(lines):
            if not raw.strip():
                continue
            try:
                events.append(validate(raw))
            except ValidationError as exc:
                if exc.errors()[0]["type"] == "json_invalid":  # not JSON, or not UTF-8
                    if index >= len(lines) - 2:
                        break  # the torn tail of a crash
                    problem = f"not a JSON line ({exc.errors()[0]['msg']})"
                else:
                    problem = _line_problem(exc)
                raise RunDirError(f"{path}:{index + 1}: {problem}. {_FIX}") from None
        return events


@dataclass(frozen=True)
class ChainCheck:
    """What :func:`check_chain` found: where the chain breaks, and the head it reached."""

    chained: bool
    """False: the journal was written before chaining (its first line carries no link)."""
    problems: tuple[tuple[int, str], ...]
    """(line number, what is wrong), for each link that does not hold."""
    head: str
    """The hash of the last complete line (the genesis for an empty journal)."""


def check_chain(path: Path, genesis: str) -> ChainCheck:
    """Follow the chain from ``genesis`` (run.json's SHA-256) through every complete line.

    An edited line breaks the link of the line after it; a removed or inserted line breaks
    the link where it was; a changed run.json breaks line 1's link.
    """
    try:
        data = path.read_bytes() if path.exists() else b""
    except OSError as exc:  # a folder where the journal should be, or unreadable
        raise RunDirError(
            f"{path}: cannot read the journal ({exc.strerror or exc}). Fix: restore it from a "
            "backup; it is the run's record"
        ) from None
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines.pop()  # the torn tail of a crash: not part of the record
    problems: list[tuple[int, str]] = []
    expected = genesis
    for number, line in enumerate(lines, start=1):
        match = _PREV.match(line)
        if match is None:
            if number == 1:
                return ChainCheck(False, (), sha256_hex(lines[-1]))
            problems.append(
                (
                    number,
                    "carries no link to the line before it: it was inserted "
                    "or rewritten after the run wrote it",
                )
            )
        elif match.group(1).decode("ascii") != expected:
            if number == 1:
                problems.append(
                    (
                        1,
                        f"links to a run.json with SHA-256 {match.group(1).decode()}, "
                        f"but run.json's is {genesis}: run.json was changed after the "
                        "run started",
                    )
                )
            else:
                problems.append(
                    (
                        number,
                        f"does not link to line {number - 1}: line "
                        f"{number - 1} was changed, or lines were removed or inserted "
                        "between them",
                    )
                )
        expected = sha256_hex(line)
    return ChainCheck(True, tuple(problems), expected)
