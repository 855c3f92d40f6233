"""The one clock for stored timestamps: UTC, ISO 8601, so every record sorts and compares."""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    """Now, as stored in run.json, the journal, results and locks.

    >>> now_iso().endswith("+00:00")
    True
    """
    return datetime.now(UTC).isoformat()
