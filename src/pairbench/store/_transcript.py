"""The normalized transcript: one JSON object per line, each stamped with a monotonic time.

Event kinds every adapter uses (extra fields are allowed and kept)::

    agent_start   {agent, arm}
    mcp_connect   {server, transport, ms, ok, error?, tools?}
    tool_call     {id, server, tool, arguments}
    tool_result   {id, server, tool, is_error, text, client_ms}
    transport_failure {server, failure, detail}
    message       {text}                 narration by the agent
    usage         {input_tokens?, output_tokens?, cost_usd?, source, provenance}
    final         {text}                 the agent's final answer
    error         {message}
    stdout / stderr {line}               raw lines from a subprocess agent
    model_request {turn, ok, latency_ms, usage, seed_sent, ...}   one model API request
    invalid_tool_call {name, arguments, error}   a call the model made to no offered tool
    raw {line}                           a CLI agent's stdout line, kept for re-parsing
    agent_init / agent_stream            a CLI agent's init and unparsed stream events
    tool_search / tool_search_result     Claude Code's ToolSearch (on-surface, a turn)
    warning {message}                    something the parser noticed and kept
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from pairbench.store._redact import Redactor


@dataclass(frozen=True)
class WrittenTranscript:
    """A transcript file handed over still open (see :meth:`Transcript.hand_over`)."""

    path: Path
    handle: BinaryIO
    sha256: str
    """SHA-256 of every byte this transcript wrote to the file."""
    size: int
    """How many bytes it wrote."""


class Transcript:
    """Collects events in memory and streams them to a JSONL file as they arrive.

    **Usage**::

        tr = Transcript(path)
        tr.emit("message", text="Looking up the issue")
        tr.close()          # returns the SHA-256 of the file's bytes

    With a ``redactor``, each line is redacted before it reaches the file (a secret the
    agent prints is never on disk, not even while the attempt runs), while ``events`` keep
    what the agent really produced: graders and detectors judge those.
    """

    def __init__(self, path: Path | None, redactor: Redactor | None = None) -> None:
        self._t0 = time.monotonic()
        self.events: list[dict[str, Any]] = []
        self._path = path
        self._redactor = redactor if redactor else None
        self._file: BinaryIO | None = None
        if path is not None:
            # Unbuffered: each event is one write(2) straight to the kernel (see emit), and
            # opening it asks nothing of the file (a buffered one costs an fstat, a tty
            # check and a seek more, each a syscall on the folder threads).
            try:
                self._file = path.open("wb", buffering=0)
            except FileNotFoundError:
                # Only the first transcript in a folder pays for mkdir; the rest open at once.
                path.parent.mkdir(parents=True, exist_ok=True)
                self._file = path.open("wb", buffering=0)
        self._digest = hashlib.sha256()
        self._size = 0

    def now(self) -> float:
        """Seconds since the attempt started, on the monotonic clock."""
        return time.monotonic() - self._t0

    def emit(self, kind: str, *, t: float | None = None, **fields: Any) -> dict[str, Any]:
        """Append one event; ``t`` defaults to now."""
        event: dict[str, Any] = {"t": round(self.now() if t is None else t, 6), "kind": kind}
        event.update(fields)
        self.events.append(event)
        text = (
            json.dumps(event, ensure_ascii=False, default=str)
            if self._redactor is None
            else self._redactor.redact_line(event)
        )
        line = (text + "\n").encode("utf-8")
        self._digest.update(line)
        self._size += len(line)
        if self._file is not None:
            # In the file at once (an unbuffered file: no flush to wait for): a killed
            # runner leaves everything the attempt did so far.
            view = memoryview(line)
            while view:  # a regular file takes it whole unless the disk fills up
                view = view[self._file.write(view) :]
        return event

    def of_kind(self, *kinds: str) -> list[dict[str, Any]]:
        """Events of the given kinds, in order."""
        return [e for e in self.events if e["kind"] in kinds]

    def close(self, *, sync: bool = True) -> str:
        """Close the file (fsynced unless ``sync=False``); return the SHA-256 of what it wrote."""
        if self._file is not None and not self._file.closed:
            self._file.flush()
            if sync:
                os.fsync(self._file.fileno())
            self._file.close()
        return self._digest.hexdigest()

    def hand_over(self) -> WrittenTranscript | None:
        """Stop writing to the file and hand it over, still open, to be fsynced and closed
        by the caller (the executor's group commit); None when there is no open file.

        Its ``sha256`` is of exactly the bytes written, so the caller need not read the
        file back.
        """
        handle = self._file
        if handle is None or handle.closed or self._path is None:
            return None
        self._file = None
        handle.flush()
        return WrittenTranscript(self._path, handle, self._digest.hexdigest(), self._size)
