"""Per-trial HTTP MCP servers (``warm: false``): started for one attempt, stopped after it.

A server that keeps state across requests (a browser, a cache) is only a fair arm of a
paired comparison if no trial sees another's state; ``warm: false`` buys that with a start
per trial. The start-up is a cost of that arm, so it is timed (``mcp_server_start`` in the
transcript, ``server_start_ms`` in the metrics), apart from connect and the agent's time.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pairbench.fixtures._procs import FixtureError, WarmServer, start_warm_server
from pairbench.fixtures._server_folder import server_folder
from pairbench.spec._models import McpServer, WebMcpPage
from pairbench.spec._server_identity import ServerIdentity
from pairbench.store._transcript import Transcript


def per_trial(servers: Mapping[str, McpServer]) -> dict[str, McpServer]:
    """The servers of ``servers`` that are started for each trial."""
    return {n: s for n, s in servers.items() if s.transport == "http" and s.serve and not s.warm}


async def start_trial_servers(
    servers: Mapping[str, McpServer],
    fixture_root: Path,
    env: Mapping[str, str],
    folder: Path,
    transcript: Transcript,
) -> list[WarmServer]:
    """Start each per-trial server (in its own folder under ``folder``); all or none.

    Raises ``FixtureError`` after stopping those already started.
    """
    started: list[WarmServer] = []
    try:
        for name, spec in per_trial(servers).items():
            cwd = server_folder(folder, name)
            cwd.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            try:
                server = await start_warm_server(name, spec, fixture_root, env, cwd=cwd)
            except FixtureError as exc:
                ms = round((time.perf_counter() - t0) * 1000, 3)
                transcript.emit("mcp_server_start", server=name, ms=ms, ok=False, error=str(exc))
                raise
            ms = round((time.perf_counter() - t0) * 1000, 3)
            transcript.emit("mcp_server_start", server=name, ms=ms, ok=True, url=server.url)
            started.append(server)
    except BaseException:
        await stop_trial_servers(started)
        raise
    return started


async def stop_trial_servers(started: list[WarmServer]) -> None:
    """Stop them all (each one's whole process group), even when cancelled."""
    for server in started:
        await server.aclose()


def identities(events: list[dict[str, Any]]) -> dict[str, ServerIdentity]:
    """The servers' identities the connections found (``mcp_connect`` events)."""
    return {
        str(e["server"]): ServerIdentity.model_validate(e["identity"])
        for e in events
        if e["kind"] == "mcp_connect" and e.get("identity")
    }


def client_config(
    servers: dict[str, McpServer],
    pages: dict[str, WebMcpPage],
    warm: dict[str, str],
    seed: int,
    fixture_dir: Path,
    rel: str,
    env: dict[str, str],
    folder: Path | None = None,
    root: Path | None = None,
) -> dict[str, Any] | None:
    """The arm's servers and pages (through the WebMCP bridge) as a Claude-Code-style config
    for subprocess agents (None: the arm has neither)."""
    if not servers and not pages:
        return None
    from pairbench.fixtures._bridge_config import bridge_config
    from pairbench.fixtures._mcp import mcp_client_config

    # Agents launch their stdio servers in the same folders McpSurface starts them in.
    config = {}
    if servers:
        config = mcp_client_config(
            servers, warm, seed, fixture_dir, rel, env, folder=folder, root=root
        )
    found: dict[str, Any] = dict(config.get("mcpServers") or {})
    if pages:
        found |= bridge_config(pages, warm, seed, fixture_dir, rel, env)
    return {"mcpServers": found}
