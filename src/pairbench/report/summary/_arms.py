"""Who ran each arm: agent, model, tool-discovery mode and version, and the models seen."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from pairbench.report.summary._frame import Frame


def _text(value: Any) -> str | None:
    """An identity as text: a string as it is, anything else (``false``, 3) as JSON."""
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _models_seen(frame: Frame, arm: int) -> list[str]:
    """Distinct model ids over every record of the arm (final and kept), sorted: the rows
    are in commit order, which concurrency makes vary between runs."""
    table = frame.table
    rows = frame.of_arm(np.concatenate([frame.final, frame.kept]), arm)
    codes = np.unique(table.columns["models"][rows])
    cats = table.categories["models"]
    return sorted({m for c in codes.tolist() if c >= 0 for m in json.loads(cats[c])})


def arm_identities(frame: Frame) -> list[dict[str, Any]]:
    """Per arm in declared order, from run.json ``identities.arms.<arm>`` (falling back to
    ``agents.<arm>`` for runs that predate identities), with the models its records saw."""
    run = frame.run
    identities = run.arm_identities()
    out = []
    for i, arm in enumerate(frame.arms):
        ident: Mapping[str, Any] = identities.get(arm) or {}
        agent = run.agents.get(arm)
        settings: Mapping[str, Any] = (agent.settings if agent else None) or {}
        out.append(
            {
                "arm": arm,
                "agent": _text(ident.get("agent", agent.adapter if agent else None)),
                "model": _text(ident.get("model", settings.get("model"))),
                "tool_discovery": _text(ident.get("tool_discovery")),
                "agent_version": _text(ident.get("agent_version")),
                "models_seen": _models_seen(frame, i),
            }
        )
    return out
