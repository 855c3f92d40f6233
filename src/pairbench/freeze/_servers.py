"""Identifying an experiment's MCP servers: for the lock (``freeze``) and for pins (a run).

Each arm's servers are started as a trial would start them (stdio per connection, ``serve``
ones on a port of their own) in a throwaway folder, connected once, and identified (see
``spec._server_identity``). A ``url`` endpoint is identified only when the variables its
headers read are set; otherwise it is left out of the lock and said so.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pairbench._model import Frozen
from pairbench.spec._load import LoadedExperiment
from pairbench.spec._models import McpServer
from pairbench.spec._server_identity import ServerIdentity

__all__ = ["Identified", "LockedServer", "check_pins", "identify", "identify_servers"]


class LockedServer(Frozen):
    """One arm's MCP server as ``freeze`` found it."""

    arm: str
    server: str
    identity: ServerIdentity


@dataclass(frozen=True)
class Identified:
    servers: list[LockedServer] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """``arm.server: why`` for each server that was not identified."""


def _secrets_set(spec: McpServer, environ: Mapping[str, str]) -> bool:
    return all(ref in environ for ref in spec.secret_refs().values())


async def _identify_arm(
    loaded: LoadedExperiment, arm: str, servers: dict[str, McpServer], folder: Path
) -> dict[str, ServerIdentity]:
    from pairbench.agents._env import scrubbed_env
    from pairbench.fixtures._mcp import McpSurface
    from pairbench.fixtures._procs import start_warm_server
    from pairbench.store._transcript import Transcript

    env = scrubbed_env(folder / "servers", tmp=folder / "t")
    fixtures = folder / "fixtures"
    (fixtures / "probe").mkdir(parents=True, exist_ok=True)
    started = []
    try:
        urls = {}
        for name, spec in servers.items():
            if spec.transport == "http" and spec.serve:
                cwd = folder / "cwd" / name
                cwd.mkdir(parents=True, exist_ok=True)
                server = await start_warm_server(name, spec, fixtures, env, cwd=cwd)
                started.append(server)
                urls[name] = server.url
        transcript = Transcript(folder / f"{arm}.jsonl")
        surface = McpSurface(
            servers,
            urls,
            0,
            fixtures / "probe",
            "probe",
            env,
            transcript,
            folder=folder / "servers",
            root=loaded.root,
            enforce_pins=False,
        )
        try:
            async with surface:
                return surface.identities
        finally:
            transcript.close()
    finally:
        for server in started:
            await server.aclose()


def identify_servers(
    loaded: LoadedExperiment,
    *,
    only_pinned: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Identified:
    """Connect to every arm's MCP servers once and identify them (see :func:`identify`)."""
    import anyio  # only an experiment with MCP servers gets here: off every run's start-up

    return anyio.run(lambda: identify(loaded, only_pinned=only_pinned, environ=environ))


async def identify(
    loaded: LoadedExperiment,
    *,
    only_pinned: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Identified:
    """Connect to every arm's MCP servers once and identify them.

    ``only_pinned``: just the servers that declare ``pin`` (what a run checks before its
    first attempt). Raises ``FixtureError`` when a server cannot be started or reached.
    """
    env = os.environ if environ is None else environ
    found: list[LockedServer] = []
    skipped: list[str] = []
    for arm_name, arm in loaded.experiment.arms.items():
        if arm.tools == "none":
            continue
        servers = {}
        for name, spec in arm.tools.mcp.items():
            if only_pinned and spec.pin is None:
                continue
            if spec.url and not _secrets_set(spec, env):
                skipped.append(f"{arm_name}.{name}: its header variables are not set")
                continue
            servers[name] = spec
        if not servers:
            continue
        # A short folder: servers bind sockets in it (108-byte Unix socket paths).
        folder = Path(tempfile.mkdtemp(prefix="pb-id-"))
        try:
            ids = await _identify_arm(loaded, arm_name, servers, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        found += [LockedServer(arm=arm_name, server=n, identity=i) for n, i in sorted(ids.items())]
    return Identified(found, skipped)


async def check_pins(loaded: LoadedExperiment) -> None:
    """Raise ``RunRefused`` naming each pinned server that is not what its ``pin`` says."""
    from pairbench._errors import RunRefused

    pinned = [
        (a, n, s.pin)
        for a, arm in loaded.experiment.arms.items()
        if arm.tools != "none"
        for n, s in arm.tools.mcp.items()
        if s.pin is not None
    ]
    if not pinned:
        return
    found = {
        (s.arm, s.server): s.identity for s in (await identify(loaded, only_pinned=True)).servers
    }
    wrong = []
    for arm, name, pin in pinned:
        identity = found.get((arm, name))
        if identity is not None and (why := pin.mismatches(identity)):
            wrong.append(f"arms.{arm}.tools.mcp.{name}: {'; '.join(why)}")
    if wrong:
        raise RunRefused(
            "a pinned MCP server is not the one the experiment pins, so no trial ran: "
            + " | ".join(wrong)
            + ". Fix: install the pinned version, or update 'pin' (and re-freeze) if the "
            "change is intended"
        )
