"""The local OpenAI Responses API double, in process or as its own process.

**In process** (a background thread)::

    from pairbench.testing.responses_double import start_responses_double
    with start_responses_double(script={"rate_limit_on": [1]}) as double:
        base_url = f"{double.url}/v1"

**As a process**::

    python -m pairbench.testing.responses_double --port-file /tmp/port \\
        [--script script.json] [--log exchanges.jsonl] [--rate-limit-on 1] [--hang-on 2] \\
        [--fail-auth] [--api-key KEY]

It binds 127.0.0.1 on a free port (or ``--port``), writes the port to ``--port-file`` once it
listens, and serves until SIGINT/SIGTERM. ``--script`` is a JSON ``ResponsesScript``; flags
add to it. ``--log`` appends one JSON line per ``POST /v1/responses``: ``{n, status, body,
usage, output}``. See ``pairbench.testing._responses_double`` for the wire format and
``pairbench.testing._responses_convert`` for how replies are decided.

Pointing the real Codex CLI at it (``codex exec``)::

    -c model_provider=local -c 'model_providers.local.name="local"'
    -c 'model_providers.local.base_url="<url>/v1"' -c 'model_providers.local.wire_api="responses"'
    -c 'model_providers.local.env_key="OPENAI_API_KEY"'
    -c 'mcp_servers.<name>.required=true'     # else codex 0.171.0 does not wait for the server
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from pairbench.testing._responses_convert import SHELL_TOOLS, Call, Reply, reply_to, to_chat
from pairbench.testing._responses_double import (
    ResponsesDouble,
    ResponsesExchange,
    ResponsesScript,
)
from pairbench.testing.chat_double import bind_loopback, serve_in_thread

__all__ = [
    "SHELL_TOOLS",
    "Call",
    "Reply",
    "ResponsesDouble",
    "ResponsesExchange",
    "ResponsesScript",
    "main",
    "reply_to",
    "start_responses_double",
    "to_chat",
]


def _server(double: ResponsesDouble) -> uvicorn.Server:
    # ws="none": a websocket upgrade reaches the app as plain HTTP and is refused with 426
    # (no websocket library is needed, and a client falls back at once).
    config = uvicorn.Config(
        double.app(),
        log_level="error",  # not uvicorn's "Unsupported upgrade request" warnings
        lifespan="off",
        access_log=False,
        ws="none",
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


@contextmanager
def start_responses_double(
    script: ResponsesScript | Mapping[str, Any] | None = None,
) -> Iterator[ResponsesDouble]:
    """Serve a ``ResponsesDouble`` on 127.0.0.1 (a free port) in a background thread.

    **Usage**::

        with start_responses_double(script={"server_error_on": [1]}) as double:
            ...  # point a client at f"{double.url}/v1"
        double.paths, double.usages  # still readable after the server stopped
    """
    parsed = (
        script
        if isinstance(script, ResponsesScript)
        else ResponsesScript.model_validate(dict(script or {}))
    )
    double = ResponsesDouble(parsed)
    with serve_in_thread(_server, double, "responses double"):
        try:
            yield double
        finally:
            double.close()  # releases hanging requests before the server is stopped


_LISTS = ("rate_limit_on", "quota_on", "server_error_on", "hang_on", "stall_on")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pairbench.testing.responses_double")
    p.add_argument("--port-file", type=Path, required=True, help="write the bound port here")
    p.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    p.add_argument("--script", type=Path, help="a JSON ResponsesScript")
    p.add_argument("--log", type=Path, help="append one JSON line per responses request")
    for name in _LISTS:
        p.add_argument(f"--{name.replace('_', '-')}", type=int, action="append", default=[],
                       metavar="N")  # fmt: skip
    p.add_argument("--fail-auth", action="store_true", help="answer 401 to everything")
    p.add_argument("--api-key", help="answer 401 unless the bearer token is this")
    p.add_argument("--model", help="the model named in replies")
    return p


def _script(args: argparse.Namespace) -> ResponsesScript:
    data: dict[str, Any] = {}
    if args.script is not None:
        data = json.loads(args.script.read_text(encoding="utf-8"))
    for key in _LISTS:
        data[key] = [*data.get(key, []), *getattr(args, key)]
    if args.fail_auth:
        data["fail_auth"] = True
    for key in ("api_key", "model"):
        if getattr(args, key):
            data[key] = getattr(args, key)
    return ResponsesScript.model_validate(data)


def main(argv: list[str] | None = None) -> int:
    """Serve the double until interrupted; returns the exit status.

    Example::

        python -m pairbench.testing.responses_double --port-file port.txt --server-error-on 1
    """
    args = _parser().parse_args(argv)
    double = ResponsesDouble(_script(args))
    if args.log is not None:
        log: Path = args.log

        def append(exchange: ResponsesExchange) -> None:
            line = {"n": exchange.n, "status": exchange.status, "body": exchange.body,
                    "usage": exchange.usage, "output": exchange.output}  # fmt: skip
            with log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")

        double.on_exchange = append
    sock = bind_loopback(args.port)
    port = sock.getsockname()[1]
    double.url = f"http://127.0.0.1:{port}"
    tmp = args.port_file.with_name(args.port_file.name + ".tmp")
    tmp.write_text(str(port), encoding="utf-8")
    tmp.replace(args.port_file)  # readers never see a half-written port
    print(f"responses double listening on {double.url}", file=sys.stderr)
    server = _server(double)
    # SIGINT/SIGTERM make uvicorn set should_exit; release hanging requests at the same time.
    watcher = threading.Thread(target=_release_on_exit, args=(server, double), daemon=True)
    watcher.start()
    server.run(sockets=[sock])
    double.close()
    return 0


def _release_on_exit(server: uvicorn.Server, double: ResponsesDouble) -> None:
    while not server.should_exit:
        time.sleep(0.05)
    double.close()


if __name__ == "__main__":
    raise SystemExit(main())
