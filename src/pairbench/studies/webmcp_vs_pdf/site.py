"""The study's site: the frozen WebMCP page, its tools' JSON endpoints, the PDF, and (for
people only) the page with Living Evidence filled from a run store and local scoring.

Trial fixture (what ``experiment.yaml`` serves; the agent's browser opens ``/``)::

    PAIRBENCH_URL_FILE=/tmp/url python -m pairbench.studies.webmcp_vs_pdf.site

People (``pairbench study webmcp-vs-pdf serve`` runs the same app with a runs dir)::

    python -m pairbench.studies.webmcp_vs_pdf.site --runs-dir runs --port 8000

It binds 127.0.0.1 itself (port 0 by default: no race between parallel runs) and writes
its base URL to ``PAIRBENCH_URL_FILE`` when that is set. Every response carries
``Origin-Agent-Cluster: ?1`` (WebMCP refuses documents that share an agent cluster). Pasted
answers are scored in memory and never stored or logged (the access log is off).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from pairbench.fixtures._protocol import ENV_URL_FILE
from pairbench.studies.webmcp_vs_pdf._api import (
    RequestError,
    dataset_payload,
    egger_payload,
    fit_payload,
    score_payload,
)
from pairbench.studies.webmcp_vs_pdf._dataset import PDF_PATH
from pairbench.studies.webmcp_vs_pdf._page import PAGE_PATH

HEADERS = {"Origin-Agent-Cluster": "?1", "Cache-Control": "no-store"}
_MAX_BODY = 256_000

Payload = Callable[[dict[str, Any]], dict[str, Any]]


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=HEADERS)


def _endpoint(payload: Payload) -> Callable[[Request], Any]:
    async def handle(request: Request) -> Response:
        raw = await request.body()
        if len(raw) > _MAX_BODY:
            return _json({"error": "request body too large"}, 413)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return _json({"error": "the request body is not JSON"}, 400)
        try:
            return _json(payload(body))
        except RequestError as exc:
            return _json({"error": str(exc)}, 400)

    return handle


def create_app(runs_dir: Path | None = None, *, people: bool = False) -> Starlette:
    """The site. ``people=True`` adds ``/people`` (Living Evidence from ``runs_dir``) and the
    scoring endpoint; the trial fixture leaves them out, so an agent never sees other runs.
    """

    async def page(request: Request) -> Response:
        # Read per request: the bytes served are the committed file's, never a rendering.
        return Response(PAGE_PATH.read_bytes(), media_type="text/html", headers=HEADERS)

    async def pdf(request: Request) -> Response:
        return Response(PDF_PATH.read_bytes(), media_type="application/pdf", headers=HEADERS)

    routes = [
        Route("/", page),
        Route("/index.html", page),
        Route("/benchmark-baseline.pdf", pdf),
        Route("/api/dataset", _endpoint(dataset_payload), methods=["GET", "POST"]),
        Route("/api/fit_random_effects", _endpoint(fit_payload), methods=["POST"]),
        Route("/api/egger_test", _endpoint(egger_payload), methods=["POST"]),
    ]
    if people:
        from pairbench.studies.webmcp_vs_pdf._people import people_page

        async def people_view(request: Request) -> Response:
            return HTMLResponse(people_page(runs_dir), headers=HEADERS)

        routes += [
            Route("/people", people_view),
            Route("/api/score", _endpoint(score_payload), methods=["POST"]),
        ]
    return Starlette(routes=routes)


def bind(port: int = 0) -> socket.socket:
    """A listening-ready socket on 127.0.0.1 (port 0: the kernel picks a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


def serve(app: Starlette, sock: socket.socket, on_ready: Callable[[str], None]) -> None:
    """Serve ``app`` on ``sock`` until SIGINT/SIGTERM; ``on_ready(base_url)`` once it listens."""
    import anyio
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await anyio.sleep(0.01)
        on_ready(base)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(announce)
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()

    anyio.run(main)


def write_url_file(base: str) -> None:
    """Write ``base`` to ``$PAIRBENCH_URL_FILE`` atomically (the harness never reads half)."""
    target = os.environ.get(ENV_URL_FILE)
    if target:
        tmp = f"{target}.tmp"
        Path(tmp).write_text(base, encoding="utf-8")
        os.replace(tmp, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pairbench.studies.webmcp_vs_pdf.site")
    parser.add_argument("--port", type=int, default=0, help="127.0.0.1 port (0: any free)")
    parser.add_argument("--runs-dir", type=Path, default=None, help="serve /people from here")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    app = create_app(args.runs_dir, people=args.runs_dir is not None)
    serve(app, bind(args.port), write_url_file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
