"""What the fake ``claude`` and ``codex`` executables share: the recorded lines, real MCP
connections to the configured servers, and the scripts studies register for their prompts."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from pairbench import _registry
from pairbench.studies import CliScript

RECORDED = Path(__file__).parent / "recorded"


def recorded(name: str) -> list[dict[str, Any]]:
    """The recorded lines of ``recorded/<name>``, parsed."""
    lines = (RECORDED / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# -- shared with fake_codex: MCP connections and the scripted tasks ------------------------


@dataclass
class Server:
    name: str
    transport: str
    status: str = "failed"
    error: str = ""
    tools: list[str] = field(default_factory=list)
    session: ClientSession | None = None

    async def call(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        """(is_error, text) of a real ``tools/call``."""
        assert self.session is not None
        result = await self.session.call_tool(tool, args)
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        return bool(result.is_error), text


@asynccontextmanager
async def _transport(spec: dict[str, Any]) -> AsyncIterator[Any]:
    if spec.get("type", "stdio") == "stdio":
        params = StdioServerParameters(
            command=spec["command"], args=list(spec.get("args") or []), env=spec.get("env")
        )
        async with stdio_client(params) as streams:
            yield streams
    else:
        headers = dict(spec.get("headers") or {})
        async with (
            create_mcp_http_client(headers=headers) as client,
            streamable_http_client(spec["url"], http_client=client) as streams,
        ):
            yield streams


@asynccontextmanager
async def _session(spec: dict[str, Any]) -> AsyncIterator[tuple[ClientSession, list[str]]]:
    async with _transport(spec) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session, [t.name for t in (await session.list_tools()).tools]


async def with_servers(
    specs: dict[str, dict[str, Any]],
    body: Callable[[list[Server]], Awaitable[int]],
    *,
    skip: bool = False,
) -> int:
    """Connect every server of ``specs`` (an ``mcpServers`` dict) in this task, run ``body``.

    A server that fails to connect is ``failed`` and the CLI carries on, as the real one does.
    """
    servers = [Server(n, str(s.get("type", "stdio"))) for n, s in specs.items()]

    async def nest(i: int) -> int:
        if skip or i == len(servers):
            return await body(servers)
        server = servers[i]
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + 20) as scope:
                async with _session(specs[server.name]) as (session, tools):
                    scope.deadline = math.inf
                    server.session, server.tools, server.status = session, tools, "connected"
                    return await nest(i + 1)
            server.error = "connect timed out"
        except Exception as exc:
            if server.status == "connected":
                raise
            server.error = f"{type(exc).__name__}: {exc}"
        print(f"MCP server {server.name!r} failed: {server.error}", file=sys.stderr)
        return await nest(i + 1)

    return await nest(0)


def task_for(prompt: str) -> CliScript | None:
    """The scripted behaviour for a prompt: the first registered study's script that claims
    it (``pairbench.cli_scripts``), or None."""
    for name in _registry.names("cli_scripts"):
        script: CliScript | None = _registry.load("cli_scripts", name)(prompt)
        if script is not None:
            return script
    return None


def parse_result(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


NO_TOOLS = "I cannot reach the issue tracker from here."


# -- the Claude Code CLI ----------------------------------------------------------------------
