"""The local Chat Completions double, in process or as its own process.

**In process** (a background thread)::

    from pairbench.testing.chat_double import start_chat_double
    with start_chat_double(script={"rate_limit_on": [2]}) as double:
        base_url = f"{double.url}/v1"

**As a process**::

    python -m pairbench.testing.chat_double --port-file /tmp/port \\
        [--script script.json] [--log exchanges.jsonl] [--rate-limit-on 2] [--fail-auth] \\
        [--reject-file-parts]

It binds 127.0.0.1 on a free port (or ``--port``), writes the port to ``--port-file`` once it
listens, and serves until SIGINT/SIGTERM. ``--script`` is a JSON ``ChatScript``; flags add to
it. ``--log`` appends one JSON line per chat request: ``{n, status, body, usage}``. See
``pairbench.testing._chat_double`` for how replies are decided from the request.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import uvicorn
from starlette.applications import Starlette

from pairbench.testing._chat_double import (
    ChatDouble,
    Exchange,
    count_tokens,
    decide,
    usage_for,
)
from pairbench.testing._chat_double_refusals import file_parts
from pairbench.testing._chat_script import ChatScript

__all__ = [
    "ChatDouble",
    "ChatScript",
    "Exchange",
    "count_tokens",
    "decide",
    "file_parts",
    "main",
    "serve_in_thread",
    "start_chat_double",
    "usage_for",
]


def bind_loopback(port: int = 0) -> socket.socket:
    """A listening TCP socket on 127.0.0.1 (port 0: the OS picks a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


class Served(Protocol):
    """Anything with a Starlette ``app()``: the chat double, the Anthropic double."""

    def app(self) -> Starlette: ...


def server_for(double: Served) -> uvicorn.Server:
    """A uvicorn server for the double's app (quiet; no lifespan)."""
    config = uvicorn.Config(double.app(), log_level="warning", lifespan="off", access_log=False)
    return uvicorn.Server(config)


@contextmanager
def start_chat_double(script: ChatScript | Mapping[str, Any] | None = None) -> Iterator[ChatDouble]:
    """Serve a ``ChatDouble`` on 127.0.0.1 (a free port) in a background thread."""
    parsed = (
        script if isinstance(script, ChatScript) else ChatScript.model_validate(dict(script or {}))
    )
    double = ChatDouble(parsed)
    with serve_in_thread(server_for, double, "chat double"):
        yield double


@contextmanager
def serve_in_thread(
    make: Callable[[Any], uvicorn.Server], double: Any, what: str
) -> Iterator[uvicorn.Server]:
    """Serve ``double`` (which gets ``.url``) on 127.0.0.1, a free port, in a daemon thread,
    until the block ends. Every local API double starts and stops this way."""
    sock = bind_loopback()
    double.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = make(double)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the {what} did not start")
            time.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pairbench.testing.chat_double")
    p.add_argument("--port-file", type=Path, required=True, help="write the bound port here")
    p.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    p.add_argument("--script", type=Path, help="a JSON ChatScript")
    p.add_argument("--log", type=Path, help="append one JSON line per chat request")
    for name in ("rate-limit-on", "quota-on", "server-error-on", "omit-usage-on"):
        p.add_argument(f"--{name}", type=int, action="append", default=[], metavar="N")
    p.add_argument("--fail-auth", action="store_true")
    p.add_argument("--timings", action="store_true", help="add llama.cpp-style timings")
    p.add_argument(
        "--llama-cpp",
        action="store_true",
        help="also serve llama-server's /health, /props, /slots and /metrics (what pairbench's "
        "recording proxy asks of its upstream before a run)",
    )
    p.add_argument(
        "--reject-file-parts", action="store_true", help="answer file content parts with 400"
    )
    p.add_argument("--model")
    return p


def _script(args: argparse.Namespace) -> ChatScript:
    data: dict[str, Any] = {}
    if args.script is not None:
        data = json.loads(args.script.read_text(encoding="utf-8"))
    for key in ("rate_limit_on", "quota_on", "server_error_on", "omit_usage_on"):
        data[key] = [*data.get(key, []), *getattr(args, key)]
    if args.fail_auth:
        data["fail_auth"] = True
    if args.timings:
        data["timings"] = True
    if args.llama_cpp:
        data["llama_cpp"] = True
    if args.reject_file_parts:
        data["reject_file_parts"] = True
    if args.model:
        data["model"] = args.model
    return ChatScript.model_validate(data)


def main(argv: list[str] | None = None) -> int:
    """Serve the double until interrupted; returns the exit status."""
    args = _parser().parse_args(argv)
    double = ChatDouble(_script(args))
    if args.log is not None:
        log: Path = args.log

        def append(exchange: Exchange) -> None:
            line: dict[str, Any] = {"n": exchange.n, "status": exchange.status}
            line.update(body=exchange.body, usage=exchange.usage)
            with log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")

        double.on_exchange = append
    sock = bind_loopback(args.port)
    port = sock.getsockname()[1]
    double.url = f"http://127.0.0.1:{port}"
    tmp = args.port_file.with_name(args.port_file.name + ".tmp")
    tmp.write_text(str(port), encoding="utf-8")
    tmp.replace(args.port_file)  # readers never see a half-written port
    print(f"chat double listening on {double.url}", file=sys.stderr)
    server_for(double).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
