"""Keeping tool results short enough for a small context window."""

from __future__ import annotations

# Above read_file's page (6000), so a page and its marker always fit whole.
LIMIT = 8000


def truncate(text: str, limit: int = LIMIT, hint: str = "") -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters with a marker saying what was left out."""
    if len(text) <= limit:
        return text, False
    marker = f"\n[minirt: truncated, {len(text) - limit} of {len(text)} characters omitted"
    marker += f"; {hint}]" if hint else "]"
    return text[:limit] + marker, True
