"""The append-only journal: one fsynced JSON line per event; a torn last line is dropped."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pairbench._errors import RunDirError

_TYPES: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "attempt": (int,),
    "outcome": (str, type(None)),
    "result": (str, type(None)),
    "result_sha256": (str, type(None)),
    "transcript": (str, type(None)),
    "transcript_sha256": (str, type(None)),
    "row": (dict, type(None)),
}
"""The type of each field that resume, verify and the trial table read from an event."""

_FIX = (
    "Fix: restore the journal from a backup, or delete that line (`pairbench verify` then "
    "lists the files it named as unjournaled)"
)


def json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type: object, array, string, number, ... null."""
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return kinds.get(type(value), "number")


def _event_problem(event: Any) -> str | None:
    """What makes a parsed line not an event, or None."""
    if not isinstance(event, dict):
        return f"a JSON {json_kind(event)}, not an event object"
    if not isinstance(event.get("event"), str):
        return "an object without an 'event' name"
    for field, types in _TYPES.items():
        value = event.get(field)
        if field in event and (not isinstance(value, types) or isinstance(value, bool)):
            wanted = {str: "a string", int: "a whole number", dict: "an object"}[types[0]]
            return f"'{field}' is a JSON {json_kind(value)}, not {wanted}"
    return None


class Journal:
    """``journal.jsonl``: attempt started / finished with hashes, run started / stopped.

    **Usage**::

        j = Journal(run_dir / "journal.jsonl")
        j.append("attempt_started", key="baseline/t1/0", attempt=1)
        j.close()
        Journal.read(run_dir / "journal.jsonl")   # -> list of dicts, torn tail dropped
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._repair_tail()
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
    def encode(event: str, **fields: Any) -> bytes:
        """One event as its journal line (stamped now), for :meth:`write_lines`."""
        record = {"event": event, "at": datetime.now(UTC).isoformat(), **fields}
        return (json.dumps(record, sort_keys=True, default=str) + "\n").encode("utf-8")

    def append(self, event: str, **fields: Any) -> None:
        """Write one event line and fsync it before returning."""
        self.write_lines(self.encode(event, **fields))

    def write_lines(self, data: bytes) -> None:
        """Append whole encoded lines and fsync them before returning (one fsync for all).

        The group committer (``_commit.py``) writes a batch of lines this way; a crash in
        the middle leaves whole lines and at most one torn last line, which readers drop.
        If the write or fsync fails (disk full, I/O error), the file is cut back to where
        it was before raising: the process may go on appending (recording interrupted
        attempts), and a torn fragment in the middle would make the journal unreadable.
        """
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

    def close(self) -> None:
        os.close(self._fd)

    @staticmethod
    def read(path: Path) -> list[dict[str, Any]]:
        """Every complete event; a torn or unparsable last line is dropped.

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
        events: list[dict[str, Any]] = []
        for index, raw in enumerate(lines):
            if not raw.strip():
                continue
            problem: str | None
            try:
                event = json.loads(raw)
            except ValueError as exc:  # not JSON, or not UTF-8
                if index >= len(lines) - 2:
                    break  # the torn tail of a crash
                problem = f"not a JSON line ({exc})"
            else:
                problem = _event_problem(event)
            if problem is not None:
                raise RunDirError(f"{path}:{index + 1}: {problem}. {_FIX}")
            events.append(event)
        return events
