"""The file tools: read (paged), write and list, on paths the policy already resolved."""

from __future__ import annotations

import hashlib
from pathlib import Path

READ_LIMIT = 6000


class ToolFailed(Exception):
    """The operation was allowed but did not work; ``kind`` names the category."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)


def read_file(target: Path, relative: str, offset: int, limit: int) -> tuple[str, bool]:
    """Characters ``offset`` to ``offset + limit`` of a text file, and whether more remain."""
    if not target.is_file():
        raise ToolFailed("missing_resource", f"no such file: {relative}")
    try:
        text = target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolFailed("invalid_content", f"{relative} is not UTF-8 text") from None
    limit = max(1, min(limit, READ_LIMIT))
    chunk = text[offset : offset + limit]
    if offset + limit < len(text):
        rest = len(text) - offset - limit
        chunk += (
            f"\n[minirt: truncated, {rest} more characters; "
            f"read_file with offset={offset + limit} for more]"
        )
        return chunk, True
    return chunk, False


def write_file(target: Path, relative: str, content: str) -> dict[str, object]:
    """Write ``content`` (UTF-8), creating parent folders; the receipt of what was written."""
    if target.is_dir():
        raise ToolFailed("invalid_arguments", f"{relative} is a folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8")
    target.write_bytes(data)
    return {"path": relative, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def list_dir(target: Path, relative: str) -> str:
    """One entry per line, folders with a trailing ``/``."""
    if not target.is_dir():
        raise ToolFailed("missing_resource", f"no such folder: {relative}")
    lines = [p.name + ("/" if p.is_dir() else "") for p in sorted(target.iterdir())]
    return "\n".join(lines) if lines else "(empty)"
