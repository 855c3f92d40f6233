"""The study's fixture site: a seeded shop per trial on 127.0.0.1, served by one process.

**Where it runs, and why.** The browser that ``@playwright/mcp`` drives reaches the site by
the URL in the prompt, and the prompt is rendered from the fixture's content before any
server starts; a browser request carries no trial header. So the *fixture* owns the site:
the first ``SiteFixture.content`` call in a process starts it in a daemon thread (uvicorn,
127.0.0.1, port 0, no access log), and every trial that process runs gets its own
``/t/<token>/`` prefix on it with an unguessable token (see ``_trials``). The same site
serves both arms, so the transport is the only thing that differs between them; it reads
nothing from the network and fetches nothing.

People can look at one trial's pages with the same app::

    python3 -m pairbench.studies.mcp_transports_playwright.site --seed 7
    python3 -m pairbench.studies.mcp_transports_playwright.site --seed 7 --fixture-dir /tmp/t

It prints the trial's URL (and writes the base URL to ``PAIRBENCH_URL_FILE`` when that is
set); with ``--fixture-dir`` the store and audit log go there as they change.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path

import uvicorn

from pairbench.fixtures._protocol import ENV_URL_FILE
from pairbench.studies.mcp_transports_playwright._app import build_app
from pairbench.studies.mcp_transports_playwright._trials import SiteTrial, TrialRegistry

_START_TIMEOUT_S = 20.0


class SiteServer:
    """The site in a daemon thread of this process.

    **Usage**::

        site = SiteServer.start()
        trial = site.registry.new(seed=7)
        site.trial_url(trial)        # http://127.0.0.1:PORT/t/<token>/
        site.stop()
    """

    def __init__(self, registry: TrialRegistry, server: uvicorn.Server, port: int) -> None:
        self.registry = registry
        self.port = port
        self._server = server

    @classmethod
    def start(cls) -> SiteServer:
        registry = TrialRegistry()
        # Bound here, not by uvicorn: the port is known before the first trial's prompt.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            build_app(registry), log_level="warning", access_log=False, lifespan="off"
        )
        server = uvicorn.Server(config)
        failed: list[BaseException] = []

        def serve() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            except BaseException as exc:  # reported to the starting thread
                failed.append(exc)

        # uvicorn installs no signal handlers off the main thread: this one only serves.
        thread = threading.Thread(target=serve, name="pairbench-playwright-site", daemon=True)
        thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not server.started and not failed and thread.is_alive():
            if time.monotonic() > deadline:
                break
            time.sleep(0.005)
        if not server.started:
            raise RuntimeError(f"the playwright study's site did not start: {failed or 'timeout'}")
        return cls(registry, server, port)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def trial_url(self, trial: SiteTrial) -> str:
        return f"{self.base_url}/t/{trial.token}/"

    def stop(self) -> None:
        self._server.should_exit = True


_SHARED: SiteServer | None = None
_SHARED_LOCK = threading.Lock()


def shared_site() -> SiteServer:
    """This process's site, started on first use and kept until the process exits."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = SiteServer.start()
        return _SHARED


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="the trial's seed")
    parser.add_argument("--fixture-dir", type=Path, help="where the store and audit log go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    site = SiteServer.start()
    trial = site.registry.new(args.seed)
    if args.fixture_dir is not None:
        trial.bind(args.fixture_dir.resolve())
    url_file = os.environ.get(ENV_URL_FILE)
    if url_file:
        Path(url_file).write_text(site.base_url, encoding="utf-8")
    print(site.trial_url(trial), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        site.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
