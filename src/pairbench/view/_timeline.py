"""A transcript as a timeline, and a fixture's audit log, read line by line from disk.

Every string here is agent or server output: the templates escape it, and nothing from it
is ever a link, a class name or an attribute the page acts on.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

PART_EVENTS = 200
"""Events of a transcript one response shows; "show more" asks for the next part."""
PART_BYTES = 1 << 20
"""Bytes of a transcript one part reads at most (a part ends at the line that passes it)."""
MAX_LINE = 256 << 10
"""A longer line is cut there and shown as text, never parsed: reading the rest of it is
skipped in chunks, so no response holds more than this of one line."""
MAX_TEXT = 64 << 10
"""Characters of one event's text or fields shown; the rest is counted."""
MAX_AUDIT = 500
"""Rows of a fixture's audit log a page shows."""

_MAIN_TEXT = {
    "message": "text",
    "final": "text",
    "tool_result": "text",
    "error": "message",
    "warning": "message",
    "stdout": "line",
    "stderr": "line",
    "raw": "line",
}
"""Which field of an event kind is its text, shown in full."""
_HIDDEN = {"t", "kind"}


def pretty(value: Any) -> str:
    """JSON text of ``value`` for a ``<pre>`` (sorted keys, non-ASCII kept)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Entry:
    """One transcript event, as a timeline row."""

    t: float | None
    """Seconds since the attempt started (the transcript's monotonic stamp)."""
    delta: float | None
    """Seconds since the event before it."""
    kind: str
    title: str
    """A one-line heading: the tool, the server, the turn."""
    text: str | None = None
    """The event's main text (a message, an answer, a tool result), in full."""
    details: str | None = None
    """Every other field, as JSON text."""
    latency_ms: float | None = None
    """A tool call's round trip, a model request's latency, an MCP connect's time."""
    is_error: bool = False


@dataclass(frozen=True)
class Timeline:
    """A transcript file read back for the trial page."""

    path: str
    """Relative to the run folder."""
    entries: list[Entry] = field(default_factory=list)
    offset: int = 0
    """The byte this part starts at."""
    next_offset: int | None = None
    """Where the next part starts; None when this part reached the end of the file."""
    size: int = 0
    """The file's size when it was read (a running attempt's grows)."""
    bad_lines: int = 0
    """Lines that were not JSON objects (a torn last line of a live attempt, say)."""
    partial: bool = False
    """An attempt still running: its transcript is still being written."""


class Part(NamedTuple):
    lines: list[tuple[bytes, int]]
    """Each line (cut at ``MAX_LINE``) and its full length in bytes."""
    next_offset: int | None
    size: int


def read_part(path: Path, offset: int, events: int, budget: int) -> Part:
    """Up to ``events`` lines (about ``budget`` bytes) of ``path`` from byte ``offset``.

    Raises ``OSError`` when the file cannot be read.
    """
    lines: list[tuple[bytes, int]] = []
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(offset)
        position, used = offset, 0
        while len(lines) < events and used < budget:
            line = handle.readline(MAX_LINE + 1)
            if not line:
                return Part(lines, None, size)
            full = len(line)
            if full > MAX_LINE and not line.endswith(b"\n"):
                while chunk := handle.readline(1 << 20):  # skip the rest of the line
                    full += len(chunk)
                    if chunk.endswith(b"\n"):
                        break
                line = line[:MAX_LINE]
            lines.append((line, full))
            position += full
            used += min(full, MAX_LINE)
    return Part(lines, position if position < size else None, size)


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return f"{text[:MAX_TEXT]}\n… ({len(text) - MAX_TEXT:,} more characters not shown)"


def _title(kind: str, event: dict[str, Any]) -> str:
    server, tool = event.get("server"), event.get("tool")
    if kind in ("tool_call", "tool_result") and tool is not None:
        return f"{server}.{tool}" if server else str(tool)
    if kind == "mcp_connect":
        return f"{event.get('server')} over {event.get('transport')}"
    if kind == "model_request":
        return f"turn {event.get('turn')}" + ("" if event.get("ok", True) else " (failed)")
    if kind == "invalid_tool_call":
        return str(event.get("name"))
    return ""


def _latency(kind: str, event: dict[str, Any]) -> float | None:
    name = {"tool_result": "client_ms", "model_request": "latency_ms", "mcp_connect": "ms"}
    value = event.get(name.get(kind, ""))
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _entry(event: dict[str, Any], previous: float | None) -> Entry:
    kind = str(event.get("kind", "?"))
    raw_t = event.get("t")
    t = float(raw_t) if isinstance(raw_t, int | float) and not isinstance(raw_t, bool) else None
    main = _MAIN_TEXT.get(kind)
    text = event.get(main) if main else None
    if kind == "tool_call":
        text = pretty(event.get("arguments", {}))
    rest = {
        k: v
        for k, v in event.items()
        if k not in _HIDDEN and k != main and not (kind == "tool_call" and k == "arguments")
    }
    return Entry(
        t=t,
        delta=None if t is None or previous is None else t - previous,
        kind=kind,
        title=_cut(_title(kind, event)),
        text=None if text is None else _cut(text if isinstance(text, str) else pretty(text)),
        details=_cut(pretty(rest)) if rest else None,
        latency_ms=_latency(kind, event),
        is_error=bool(event.get("is_error")) or event.get("ok") is False or kind == "error",
    )


def read_timeline(
    run: Path,
    path: Path,
    *,
    partial: bool = False,
    offset: int = 0,
    previous: float | None = None,
    events: int = PART_EVENTS,
) -> Timeline | None:
    """One part of the transcript at ``path`` as a timeline, from byte ``offset`` (a line
    start a part before returned); None when there is no such file. ``previous`` is the
    time of the event before the part (for its first gap)."""
    rel = path.relative_to(run).as_posix()
    try:
        part = read_part(path, offset, events, PART_BYTES)
    except OSError:
        return None
    entries: list[Entry] = []
    bad = 0
    for raw, full in part.lines:
        if not raw.strip():
            continue
        if full > len(raw):
            text = raw.decode("utf-8", errors="replace")
            entries.append(
                Entry(None, None, "cut", f"a line of {full:,} bytes, its first {len(raw):,}", text)
            )
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            bad += 1
            continue
        if not isinstance(event, dict):
            bad += 1
            continue
        entry = _entry(event, previous)
        previous = entry.t if entry.t is not None else previous
        entries.append(entry)
    return Timeline(rel, entries, offset, part.next_offset, part.size, bad, partial)


@dataclass(frozen=True)
class AuditRow:
    """One call as the fixture server logged it (an ``AuditEntry`` line)."""

    tool: str
    arguments: str
    """As JSON text."""
    ok: bool | None
    error: str | None
    server_ms: float | None


@dataclass(frozen=True)
class AuditLog:
    """A fixture's audit file (``audit.jsonl``, ``webmcp-<page>.audit.jsonl``)."""

    path: str
    """Relative to the run folder."""
    rows: list[AuditRow] = field(default_factory=list)
    bad_lines: int = 0


def _audit_row(entry: dict[str, Any]) -> AuditRow:
    ms = entry.get("server_ms")
    ok = entry.get("ok")
    error = entry.get("error")
    return AuditRow(
        tool=str(entry.get("tool", "?")),
        arguments=pretty(entry.get("arguments", {})),
        ok=ok if isinstance(ok, bool) else None,
        error=None if error is None else str(error),
        server_ms=float(ms) if isinstance(ms, int | float) and not isinstance(ms, bool) else None,
    )


def read_audit_logs(run: Path, folder: Path | None) -> list[AuditLog]:
    """Every audit file the attempt's fixture folder holds (none: an empty list)."""
    if folder is None or not folder.is_dir():
        return []
    logs = []
    for path in sorted(folder.glob("*audit.jsonl")):
        if not path.is_file() or path.is_symlink():
            continue
        rows: list[AuditRow] = []
        bad = 0
        try:
            lines = read_part(path, 0, MAX_AUDIT, PART_BYTES).lines
        except OSError:
            continue
        for raw, full in lines:
            if not raw.strip() or full > len(raw):
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                bad += 1
                continue
            if isinstance(entry, dict):
                rows.append(_audit_row(entry))
            else:
                bad += 1
        logs.append(AuditLog(path.relative_to(run).as_posix(), rows, bad))
    return logs
