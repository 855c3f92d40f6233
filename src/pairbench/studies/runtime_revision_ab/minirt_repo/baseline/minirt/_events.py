"""Dispatch events as JSON lines (``pairbench.dispatch/1``), written only when asked for."""

from __future__ import annotations

import json

SCHEMA = "pairbench.dispatch/1"


class EventLog:
    """Appends one JSON line per event to ``path``; does nothing when ``path`` is None."""

    def __init__(self, path: str | None) -> None:
        self._path = path or None
        self._seq = 0

    def emit(self, kind: str, **fields: object) -> None:
        """Append one event; ``seq`` orders the events of one run."""
        if self._path is None:
            return
        self._seq += 1
        record = {"schema": SCHEMA, "seq": self._seq, "kind": kind, **fields}
        line = json.dumps(record, sort_keys=True, ensure_ascii=False)
        # Opened per event: a run killed mid-way still leaves every earlier event on disk.
        with open(self._path, "a", encoding="utf-8") as out:
            out.write(line + "\n")
