"""Which MCP server a trial really talked to, and what an experiment pins it to.

A server is identified by what it says and what it offers: its ``serverInfo`` name and
version (optional in the 2026-era ``server/discover``), the protocol version the handshake
negotiated, and the SHA-256 of its canonical tool list (names, descriptions, input
schemas, sorted by name), which changes when a tool is added, renamed or re-described,
whatever the server's version string says. ``package`` is the installed package behind
the command (``@playwright/mcp 0.0.83``, ``mcp 2.3.0``) when pairbench can tell.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field

from pairbench._model import Frozen

__all__ = ["ServerIdentity", "ServerPin", "tools_sha256"]


def tools_sha256(tools: Iterable[tuple[str, str, Mapping[str, Any]]]) -> str:
    """SHA-256 of the canonical JSON of (name, description, input schema), sorted by name."""
    canonical = sorted(
        ({"name": n, "description": d, "input_schema": dict(s)} for n, d, s in tools),
        key=lambda t: str(t["name"]),
    )
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class ServerIdentity(Frozen):
    """One MCP server as a connection found it."""

    name: str | None = None
    """``serverInfo.name`` (None: the server did not say)."""
    version: str | None = None
    """``serverInfo.version``."""
    protocol_version: str | None = None
    """The negotiated protocol revision, e.g. ``2025-11-25`` (``initialize``) or
    ``2026-07-28`` (``server/discover``)."""
    tools_sha256: str
    """SHA-256 of the canonical tool list (see the module docstring)."""
    tools: list[str] = Field(default_factory=list)
    """Tool names, sorted."""
    package: str | None = None
    """The installed package the command runs, ``name version``, when known."""

    def differences(self, other: ServerIdentity) -> list[str]:
        """What differs from ``other``, one phrase each (``version 1.0 -> 1.1``)."""
        out = []
        for field in ("name", "version", "protocol_version", "package"):
            mine, theirs = getattr(self, field), getattr(other, field)
            if mine != theirs:
                out.append(f"{field.replace('_', ' ')} {mine} -> {theirs}")
        if self.tools_sha256 != other.tools_sha256:
            added = sorted(set(other.tools) - set(self.tools))
            removed = sorted(set(self.tools) - set(other.tools))
            detail = (
                ", ".join([*(f"+{t}" for t in added), *(f"-{t}" for t in removed)])
                or "same names, changed descriptions or schemas"
            )
            out.append(
                f"tool list {self.tools_sha256[:12]} -> {other.tools_sha256[:12]} ({detail})"
            )
        return out


class ServerPin(Frozen):
    """``pin:`` on a server: the identity a run must find, or it stops before its first
    attempt. Every field is optional; what is given must match exactly."""

    name: str | None = None
    version: str | None = None
    protocol_version: str | None = None
    tools_sha256: str | None = None

    def mismatches(self, found: ServerIdentity) -> list[str]:
        """Each pinned field ``found`` does not have, as ``field: pinned X, found Y``."""
        out = []
        for field, pinned in self.model_dump(exclude_none=True).items():
            got = getattr(found, field)
            if got != pinned:
                out.append(f"{field}: pinned {pinned}, found {got}")
        return out
