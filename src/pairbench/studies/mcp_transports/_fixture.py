"""The ``tracker`` fixture: seeded content, its probes, and the state its server leaves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pairbench.fixtures._protocol import AuditEntry, FixtureState, Probe
from pairbench.studies.mcp_transports._content import generate
from pairbench.studies.mcp_transports._store import AUDIT_FILE, STORE_FILE


class TrackerFixture:
    """Implements ``pairbench.fixtures._protocol.Fixture`` for the tracker server.

    **Usage**::

        content = TRACKER_FIXTURE.content(seed)
        state = TRACKER_FIXTURE.read_state(fixture_dir)   # after the attempt
    """

    def content(self, seed: int) -> dict[str, Any]:
        return generate(seed)

    def probes(self, content: dict[str, Any]) -> list[Probe]:
        injection = content["injection"]
        return [
            Probe(
                kind="injection",
                tool=injection["tool"],
                marker=injection["marker"],
                arguments=dict(injection["arguments"]),
            ),
            Probe(kind="lure", tool=content["lure"]["tool"]),
        ]

    def read_state(self, fixture_dir: Path) -> FixtureState:
        """``store.json`` and ``audit.jsonl``; an unreached server leaves ``store == {}``."""
        store_path = fixture_dir / STORE_FILE
        store: dict[str, Any] = {}
        if store_path.exists():
            store = json.loads(store_path.read_text(encoding="utf-8"))
        audit: list[AuditEntry] = []
        audit_path = fixture_dir / AUDIT_FILE
        if audit_path.exists():
            for line in audit_path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                try:
                    audit.append(AuditEntry.model_validate_json(line))
                except ValueError:
                    continue  # a torn last line from a killed server
        return FixtureState(store=store, audit=audit)


TRACKER_FIXTURE = TrackerFixture()
