"""The attempt's transcript: every event in the file the moment it is emitted."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

from pairbench.store._transcript import Transcript


def test_each_event_is_in_the_file_as_soon_as_it_is_emitted(tmp_path: Path) -> None:
    # What a runner killed outright leaves: every event emitted so far, whole.
    path = tmp_path / "t" / "0.1.partial"
    transcript = Transcript(path)
    transcript.emit("agent_start", agent="x", arm="a")
    first = path.read_bytes()
    assert [json.loads(line)["kind"] for line in first.splitlines()] == ["agent_start"]
    transcript.emit("final", text="ok")
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["kind"] for line in lines] == ["agent_start", "final"]
    written = transcript.hand_over()
    assert written is not None
    written.handle.close()
    data = path.read_bytes()
    assert written.sha256 == hashlib.sha256(data).hexdigest() and written.size == len(data)


class _Trickle(io.RawIOBase):
    """A file that takes at most 5 bytes a write, as a regular file may near a full disk."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        chunk = bytes(b[:5])
        self.data += chunk
        return len(chunk)


def test_a_short_write_is_finished_not_torn(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "0.1.partial")
    assert transcript._file is not None
    transcript._file.close()
    trickle = _Trickle()
    transcript._file = trickle  # type: ignore[assignment]
    event = transcript.emit("message", text="a line longer than five bytes")
    assert json.loads(bytes(trickle.data)) == event
