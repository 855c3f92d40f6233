"""The validity classifier: did every tool call stay on the arm's intended surface?

Besides the transcript's tool calls it reads the fixture's audit log, when given one: a
fixture that can tell how it was reached marks a request its intended client did not make
with ``arguments["off_surface"]`` (the playwright study's site: a request that is not the
browser's), and a fixture reached while the agent made no call of its surface at all was
reached some other way. Either makes the trial invalid, named ``fixture:<tool>``.
"""

from __future__ import annotations

from typing import Any

from pairbench.fixtures._protocol import FixtureState
from pairbench.spec._models import Arm
from pairbench.store._records import Validity


def intended_surface(arm: Arm, events: list[dict[str, Any]]) -> set[str]:
    """``server.tool`` names the arm intends, from the tools its servers listed, plus ``other``.

    A declared server whose listing is unknown (it never connected) allows ``server.*``.
    """
    if arm.tools == "none":
        return set()
    surface = set(arm.tools.other)
    listed: dict[str, list[str]] = {}
    for event in events:
        if event["kind"] == "mcp_connect" and event.get("ok") and "tools" in event:
            listed[str(event["server"])] = [str(t) for t in event["tools"]]
    for server in arm.tools.surfaces():  # MCP servers and WebMCP pages
        if server in listed:
            surface.update(f"{server}.{tool}" for tool in listed[server])
        else:
            surface.add(f"{server}.*")
    return surface


def classify_validity(
    arm: Arm, events: list[dict[str, Any]], state: FixtureState | None = None
) -> Validity:
    """Every ``tool_call`` event checked against the arm's surface, and the fixture's audit
    log (``state``) for requests that did not come through it. A witness, not a sandbox."""
    surface = intended_surface(arm, events)
    off: list[str] = []
    on_surface = 0
    for event in events:
        if event["kind"] != "tool_call":
            continue
        server = event.get("server")
        tool = str(event.get("tool", ""))
        name = f"{server}.{tool}" if server else tool
        if name in surface or (server and f"{server}.*" in surface):
            on_surface += 1
            continue
        off.append(name)
    audit = state.audit if state else []
    reached = [f"fixture:{e.tool}" for e in audit if e.arguments.get("off_surface")]
    if audit and not on_surface:
        # Requests reached the fixture, yet no call of the arm's surface could have made them.
        reached.append("fixture:reached without a tool call")
    return Validity(valid=not (off or reached), off_surface=off + list(dict.fromkeys(reached)))
