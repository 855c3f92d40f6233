"""Case 4: what pairbench's ``McpSurface.call`` adds over a raw ``ClientSession.call_tool``.

Run with pairbench's venv: ``.venv/bin/python bench/case_mcp.py --calls 1000 --rounds 3``.
Prints one JSON object on stdout.

Per transport (stdio, streamable HTTP) and per round, two connections to the built-in
tracker server are open side by side: one through ``McpSurface`` (pairbench's path: the
transcript events ``tool_call`` / ``tool_result`` written to a JSONL file, outcome
normalisation, client timing), one a bare ``mcp`` SDK ``ClientSession``. The same
``get_issue`` call alternates between them (A, B, B, A, ...), so drift on the shared machine
hits both alike. Stdio: each side spawns its own ``tracker_server`` child. HTTP: one warm
``tracker_server --http`` (started by pairbench's ``start_warm_server``) serves both; the raw
client sends the same trial headers. The added cost is the median of per-call differences
(surface minus raw, adjacent calls), and the difference of the medians; both are reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from pairbench.fixtures._mcp import McpSurface, start_warm_server
from pairbench.fixtures._procs import server_env
from pairbench.fixtures._protocol import ENV_FIXTURE_DIR, ENV_SEED, HEADER_SEED, HEADER_TRIAL
from pairbench.spec._models import McpServer
from pairbench.store._transcript import Transcript
from pairbench.studies.mcp_transports import TRACKER_FIXTURE

SERVER = ["python3", "-m", "pairbench.studies.mcp_transports.tracker_server"]
SEED = 7


@asynccontextmanager
async def raw_stdio(spec: McpServer, env: dict[str, str], fixture_dir: Path):  # type: ignore[no-untyped-def]
    child_env = server_env(env, spec, **{ENV_SEED: str(SEED), ENV_FIXTURE_DIR: str(fixture_dir)})
    params = StdioServerParameters(command=sys.executable, args=SERVER[1:], env=child_env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            yield s


@asynccontextmanager
async def raw_http(url: str, rel: str):  # type: ignore[no-untyped-def]
    headers = {HEADER_TRIAL: rel, HEADER_SEED: str(SEED)}
    async with (
        create_mcp_http_client(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (r, w, *_),
        ClientSession(r, w) as s,
    ):
        await s.initialize()
        yield s


@asynccontextmanager
async def sides(transport: str, root: Path, prefix: str, warm_url: str | None):  # type: ignore[no-untyped-def]
    """Both sides open: pairbench's ``McpSurface`` and a bare SDK session, with the call's
    arguments; yields ``(surface_call, raw_call, transcript)``, each call an awaitable of
    ``get_issue`` (also used by ``profile_hotspots.py 4``)."""
    content = TRACKER_FIXTURE.content(SEED)
    args = {"repo": content["target"]["repo"], "number": content["target"]["issue_number"]}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root)}
    rel_s, rel_r = f"{prefix}/s/{transport}", f"{prefix}/r/{transport}"
    dir_s, dir_r = root / rel_s, root / rel_r
    dir_s.mkdir(parents=True, exist_ok=True)
    dir_r.mkdir(parents=True, exist_ok=True)
    if transport == "stdio":
        spec = McpServer(transport="stdio", command=SERVER)
        warm: dict[str, str] = {}
        raw_cm = raw_stdio(spec, env, dir_r.resolve())
    else:
        assert warm_url is not None
        spec = McpServer(transport="http", serve=[*SERVER, "--http"])
        warm = {"tracker": warm_url}
        raw_cm = raw_http(warm_url, rel_r)
    transcript = Transcript(root / prefix / f"{transport}.transcript.jsonl")
    surface = McpSurface({"tracker": spec}, warm, SEED, dir_s, rel_s, env, transcript)

    async with surface as s, raw_cm as raw:

        async def surface_call() -> None:
            out = await s.call("tracker", "get_issue", args)
            assert not out.is_error, out.text

        async def raw_call() -> None:
            res = await raw.call_tool("get_issue", args)
            assert not res.is_error

        yield surface_call, raw_call
    transcript.close()


async def _round(
    transport: str, calls: int, root: Path, prefix: str, warm_url: str | None
) -> dict[str, Any]:
    surface_ms: list[float] = []
    raw_ms: list[float] = []
    async with sides(transport, root, prefix, warm_url) as (surface_call, raw_call):
        for _ in range(20):  # warm both paths up
            await surface_call()
            await raw_call()
        for i in range(calls):
            order = ("s", "r") if i % 2 == 0 else ("r", "s")
            for side in order:
                t0 = time.perf_counter()
                await (surface_call() if side == "s" else raw_call())
                (surface_ms if side == "s" else raw_ms).append((time.perf_counter() - t0) * 1000)
    diffs = [a - b for a, b in zip(surface_ms, raw_ms, strict=True)]
    return {
        "calls": calls,
        "surface_median_ms": statistics.median(surface_ms),
        "raw_median_ms": statistics.median(raw_ms),
        "median_of_differences_ms": statistics.median(diffs),
        "difference_of_medians_ms": statistics.median(surface_ms) - statistics.median(raw_ms),
    }


async def warm_tracker(root: Path):  # type: ignore[no-untyped-def]
    """The warm HTTP tracker both HTTP sides talk to."""
    env = server_env(
        {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root)},
        McpServer(transport="http", serve=SERVER),
    )
    return await start_warm_server(
        "tracker", McpServer(transport="http", serve=[*SERVER, "--http"]), root / "fixtures", env
    )


async def main_async(calls: int, rounds: int) -> dict[str, Any]:
    out: dict[str, Any] = {"stdio": [], "http": []}
    with tempfile.TemporaryDirectory(prefix="pb-bench-mcp-", dir=os.environ.get("BENCH_WORK")) as d:
        root = Path(d)
        fixtures = root / "fixtures"
        warm = await warm_tracker(root)
        try:
            for r in range(rounds):  # interleave the transports across rounds
                for transport in ("stdio", "http") if r % 2 == 0 else ("http", "stdio"):
                    res = await _round(transport, calls, fixtures, f"round{r}", warm.url)
                    out[transport].append(res)
        finally:
            await warm.aclose()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print(json.dumps(asyncio.run(main_async(a.calls, a.rounds))))


if __name__ == "__main__":
    main()
