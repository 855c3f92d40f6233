"""Warm servers: an arm's streamable-HTTP MCP servers and WebMCP sites, started once per run."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

from pairbench._errors import InfraStop
from pairbench.agents._env import scrubbed_env
from pairbench.fixtures._procs import FixtureError, WarmServer, start_warm_server
from pairbench.freeze._servers import check_pins
from pairbench.runner._context import RunContext
from pairbench.runner._folders import short_tmp
from pairbench.spec._load import LoadedExperiment
from pairbench.spec._models import McpServer, WebMcpPage
from pairbench.store._events import WarmServerFailed
from pairbench.store._journal import Journal


def warm_specs(loaded: LoadedExperiment) -> dict[str, dict[str, McpServer | WebMcpPage]]:
    """arm -> name -> spec of every server started once per run: http MCP servers with
    ``serve`` and ``warm`` (one with a ``url`` is already there; ``warm: false`` ones start
    per trial, ``_trial_servers``), and WebMCP pages' sites."""
    out: dict[str, dict[str, McpServer | WebMcpPage]] = {}
    for arm_name, arm in loaded.experiment.arms.items():
        if arm.tools == "none":
            continue
        found: dict[str, McpServer | WebMcpPage] = {
            n: s for n, s in arm.tools.mcp.items() if s.transport == "http" and s.serve and s.warm
        }
        found |= arm.tools.webmcp
        if found:
            out[arm_name] = found
    return out


def warm_folder(folder: Path, run: Path) -> tuple[dict[str, str], Path, Path]:
    """(environment, working folder, short TMPDIR) of a warm server of the run in ``run``,
    kept in ``folder``.

    TMPDIR is short and outside the run: Chromium's sockets there hold 108 bytes. The caller
    removes it when the server has stopped.
    """
    tmp = short_tmp(run)
    env = scrubbed_env(folder, tmp=tmp)
    cwd = folder / "cwd"  # its own working folder, not the user's
    cwd.mkdir(parents=True, exist_ok=True)
    return env, cwd, tmp


@contextlib.asynccontextmanager
async def warm_servers(rc: RunContext, journal: Journal) -> AsyncIterator[None]:
    """Start every arm's warm servers (URLs in ``rc.warm_urls``) and stop them afterwards.

    A server that fails to start is journaled and tried once more; a second failure stops
    the run (:class:`InfraStop`).
    """
    await check_pins(rc.loaded)  # a pinned server that changed: stop before any attempt
    started: list[WarmServer] = []
    tmps: list[Path] = []
    try:
        for arm_name, specs in warm_specs(rc.loaded).items():
            for name, spec in specs.items():
                env, cwd, tmp = warm_folder(rc.workdir(f"_warm/{arm_name}.{name}"), rc.run_dir.path)
                tmps.append(tmp)
                server = await _start_with_retry(rc, journal, name, spec, env, cwd)
                started.append(server)
                rc.warm_urls.setdefault(arm_name, {})[name] = server.url
        yield
    finally:
        for server in started:
            await server.aclose()
        for tmp in tmps:
            shutil.rmtree(tmp, ignore_errors=True)


async def _start_with_retry(
    rc: RunContext,
    journal: Journal,
    name: str,
    spec: McpServer | WebMcpPage,
    env: dict[str, str],
    cwd: Path,
) -> WarmServer:
    root = rc.run_dir.fixtures_root
    root.mkdir(parents=True, exist_ok=True)
    try:
        return await start_warm_server(name, spec, root, env, cwd=cwd)
    except FixtureError as first:
        journal.append(WarmServerFailed(server=name, error=str(first)))
        try:
            return await start_warm_server(name, spec, root, env, cwd=cwd)
        except FixtureError as second:
            what = "MCP server" if isinstance(spec, McpServer) else "WebMCP site"
            raise InfraStop(f"the warm {what} {name!r} failed to start twice: {second}") from second
