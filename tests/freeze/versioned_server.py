"""An MCP server whose version and tool list come from a file (test fixture, not a test).

``python3 versioned_server.py`` over stdio reads ``$SERVER_STATE`` (JSON: ``version`` and
``extra``, whether it offers a second tool): a server upgraded between two runs without a
byte of the experiment changing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp.server import MCPServer


def build(state: dict[str, object]) -> MCPServer:
    mcp = MCPServer("versioned-fixture", version=str(state["version"]))

    @mcp.tool()
    def ping() -> str:
        """Answer pong."""
        return "pong"

    if state.get("extra"):

        @mcp.tool()
        def pong() -> str:
            """Answer ping (only in the upgraded server)."""
            return "ping"

    return mcp


if __name__ == "__main__":
    build(json.loads(Path(os.environ["SERVER_STATE"]).read_text(encoding="utf-8"))).run()
