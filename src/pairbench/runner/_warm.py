"""Warm servers: an arm's streamable-HTTP MCP servers and WebMCP sites, started once per run."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from pairbench._errors import InfraStop
from pairbench.agents._env import scrubbed_env
from pairbench.fixtures._procs import FixtureError, WarmServer, start_warm_server
from pairbench.runner._context import RunContext
from pairbench.spec._models import McpServer, WebMcpPage
from pairbench.store._events import WarmServerFailed
from pairbench.store._journal import Journal


@contextlib.asynccontextmanager
async def warm_servers(rc: RunContext, journal: Journal) -> AsyncIterator[None]:
    """Start every arm's warm servers (URLs in ``rc.warm_urls``) and stop them afterwards.

    A server that fails to start is journaled and tried once more; a second failure stops
    the run (:class:`InfraStop`).
    """
    exp = rc.loaded.experiment
    started: list[WarmServer] = []
    try:
        for arm_name, arm in exp.arms.items():
            if arm.tools == "none":
                continue
            sites: dict[str, McpServer | WebMcpPage] = {
                # An http server with a ``url`` is already there: nothing to start.
                **{n: s for n, s in arm.tools.mcp.items() if s.transport == "http" and s.serve},
                **arm.tools.webmcp,  # a WebMCP page's site is warm too: once per run
            }
            for name, spec in sites.items():
                env = scrubbed_env(rc.workdir(f"_warm/{arm_name}.{name}"))
                server = await _start_with_retry(rc, journal, name, spec, env)
                started.append(server)
                rc.warm_urls.setdefault(arm_name, {})[name] = server.url
        yield
    finally:
        for server in started:
            await server.aclose()


async def _start_with_retry(
    rc: RunContext,
    journal: Journal,
    name: str,
    spec: McpServer | WebMcpPage,
    env: dict[str, str],
) -> WarmServer:
    root = rc.run_dir.fixtures_root
    root.mkdir(parents=True, exist_ok=True)
    try:
        return await start_warm_server(name, spec, root, env)
    except FixtureError as first:
        journal.append(WarmServerFailed(server=name, error=str(first)))
        try:
            return await start_warm_server(name, spec, root, env)
        except FixtureError as second:
            what = "MCP server" if isinstance(spec, McpServer) else "WebMCP site"
            raise InfraStop(f"the warm {what} {name!r} failed to start twice: {second}") from second
