"""The validity classifier: did every tool call stay on the arm's intended surface?"""

from __future__ import annotations

from typing import Any

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


def classify_validity(arm: Arm, events: list[dict[str, Any]]) -> Validity:
    """Every ``tool_call`` event checked against the arm's surface. A witness, not a sandbox."""
    surface = intended_surface(arm, events)
    off: list[str] = []
    for event in events:
        if event["kind"] != "tool_call":
            continue
        server = event.get("server")
        tool = str(event.get("tool", ""))
        name = f"{server}.{tool}" if server else tool
        if name in surface or (server and f"{server}.*" in surface):
            continue
        off.append(name)
    return Validity(valid=not off, off_surface=off)
