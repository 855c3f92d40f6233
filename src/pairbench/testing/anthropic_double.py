"""The local Anthropic Messages API double, in process or as its own process.

**In process** (a background thread)::

    from pairbench.testing.anthropic_double import start_anthropic_double
    with start_anthropic_double(script={"rate_limit_on": [1]}) as double:
        env = {"ANTHROPIC_BASE_URL": double.url, "ANTHROPIC_API_KEY": "test-key", ...}
        ...                      # run ``claude -p ...`` against it
        double.main_usages       # what the agent turns cost, to compare with ``result.usage``

**As a process**::

    python -m pairbench.testing.anthropic_double --port-file /tmp/port \\
        [--script script.json] [--log exchanges.jsonl] [--rate-limit-on 1] \\
        [--server-error-on 1] [--overloaded-on 1] [--hang-on 1] [--fail-auth] \\
        [--api-key KEY] [--delay-s 0.5]

It binds 127.0.0.1 on a free port (or ``--port``), writes the port to ``--port-file`` once it
listens, and serves until SIGINT/SIGTERM. ``--script`` is a JSON ``AnthropicScript``; flags
add to it. ``--log`` appends one JSON line per ``POST /v1/messages``: ``{n, status, main,
body, usage}``. See ``pairbench.testing._anthropic_double`` for the routes, how replies and
usage are decided, and which requests are main turns.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pairbench.testing._anthropic_double import (
    HUNG,
    SIDE_REPLY,
    AnthropicDouble,
    AnthropicScript,
    Document,
    Exchange,
    is_main_turn,
)
from pairbench.testing._anthropic_usage import FRAMING
from pairbench.testing.chat_double import bind_loopback, serve_in_thread, server_for

__all__ = [
    "FRAMING",
    "HUNG",
    "SIDE_REPLY",
    "AnthropicDouble",
    "AnthropicScript",
    "Document",
    "Exchange",
    "is_main_turn",
    "main",
    "start_anthropic_double",
]


@contextmanager
def start_anthropic_double(
    script: AnthropicScript | Mapping[str, Any] | None = None,
) -> Iterator[AnthropicDouble]:
    """Serve an ``AnthropicDouble`` on 127.0.0.1 (a free port) in a background thread.

    A ``hang_on`` request is released (answered 500) when the block exits.
    """
    parsed = (
        script
        if isinstance(script, AnthropicScript)
        else AnthropicScript.model_validate(dict(script or {}))
    )
    double = AnthropicDouble(parsed)
    with serve_in_thread(server_for, double, "Anthropic double") as server:
        double.server = server
        yield double


_FAULTS = ("rate_limit_on", "server_error_on", "overloaded_on", "hang_on")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pairbench.testing.anthropic_double")
    p.add_argument("--port-file", type=Path, required=True, help="write the bound port here")
    p.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    p.add_argument("--script", type=Path, help="a JSON AnthropicScript")
    p.add_argument("--log", type=Path, help="append one JSON line per POST /v1/messages")
    for name in _FAULTS:
        flag = f"--{name.replace('_', '-')}"
        number = "a POST /v1/messages request number (repeatable)"
        p.add_argument(flag, type=int, action="append", default=[], metavar="N", help=number)
    p.add_argument("--fail-auth", action="store_true", help="answer 401 to everything")
    p.add_argument("--api-key", help="answer 401 unless the request carries this key")
    p.add_argument("--delay-s", type=float, help="seconds to wait before every reply")
    p.add_argument("--model", help="the model named in replies")
    return p


def _script(args: argparse.Namespace) -> AnthropicScript:
    data: dict[str, Any] = {}
    if args.script is not None:
        data = json.loads(args.script.read_text(encoding="utf-8"))
    for key in _FAULTS:
        data[key] = [*data.get(key, []), *getattr(args, key)]
    if args.fail_auth:
        data["fail_auth"] = True
    for key in ("api_key", "delay_s", "model"):
        if getattr(args, key) is not None:
            data[key] = getattr(args, key)
    return AnthropicScript.model_validate(data)


def main(argv: list[str] | None = None) -> int:
    """Serve the double until interrupted; returns the exit status.

    Example::

        python -m pairbench.testing.anthropic_double --port-file port --rate-limit-on 1
    """
    args = _parser().parse_args(argv)
    double = AnthropicDouble(_script(args))
    if args.log is not None:
        log: Path = args.log

        def append(exchange: Exchange) -> None:
            line = {"n": exchange.n, "status": exchange.status, "main": exchange.main,
                    "body": exchange.body, "usage": exchange.usage}  # fmt: skip
            with log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")

        double.on_exchange = append
    sock = bind_loopback(args.port)
    port = sock.getsockname()[1]
    double.url = f"http://127.0.0.1:{port}"
    server = server_for(double)
    double.server = server
    tmp = args.port_file.with_name(args.port_file.name + ".tmp")
    tmp.write_text(str(port), encoding="utf-8")
    tmp.replace(args.port_file)  # readers never see a half-written port
    print(f"Anthropic double listening on {double.url}", file=sys.stderr)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
