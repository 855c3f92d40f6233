"""An attempt's tool surface: the arm's MCP servers and WebMCP pages, opened on demand."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench.agents._protocol import ToolSession
from pairbench.store._transcript import Transcript

if TYPE_CHECKING:
    from pairbench.spec._models import McpServer, WebMcpPage


def tool_opener(
    servers: Mapping[str, McpServer],
    pages: Mapping[str, WebMcpPage],
    warm: Mapping[str, str],
    seed: int,
    fixture_dir: Path,
    rel: str,
    server_env: Mapping[str, str],
    transcript: Transcript,
    *,
    folder: Path | None,
    root: Path | None,
) -> Callable[[], AbstractAsyncContextManager[ToolSession]]:
    """What ``AgentContext.open_tools`` calls: one surface over the servers and pages."""

    @asynccontextmanager
    async def open_tools() -> AsyncIterator[ToolSession]:
        # The MCP SDK and Playwright load only for attempts that use them (start-up cost).
        from pairbench.fixtures._mcp import McpSurface
        from pairbench.fixtures._surface import ToolSurface
        from pairbench.fixtures._webmcp import WebMcpSurface

        parts: list[McpSurface | WebMcpSurface] = []
        if servers:
            parts.append(
                McpSurface(
                    servers,
                    warm,
                    seed,
                    fixture_dir,
                    rel,
                    server_env,
                    transcript,
                    folder=folder,
                    root=root,
                )
            )
        if pages:
            parts.append(WebMcpSurface(pages, warm, transcript))
        surface = parts[0] if len(parts) == 1 else ToolSurface(parts)
        async with surface as connected:
            yield connected

    return open_tools
