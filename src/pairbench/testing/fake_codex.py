"""A fake ``codex`` CLI: ``codex exec --json`` with real MCP calls and the recorded JSONL events.

**Usage**::

    python -m pairbench.testing.fake_codex exec --json --skip-git-repo-check --ephemeral \\
        --ignore-user-config -m gpt-5.5 -s read-only -C /tmp/w \\
        -c 'mcp_servers.tracker.url="http://127.0.0.1:8000/mcp"' \\
        -c 'mcp_servers.tracker.default_tools_approval_mode="approve"' -- "PROMPT"

It parses Codex's ``exec`` flags (an unknown flag exits 2), reads the ``-c`` overrides as TOML
(as Codex does, an unparsable value is taken as a string), connects to every
``mcp_servers.<name>`` with the official ``mcp`` client and really calls tools. An MCP call
without ``default_tools_approval_mode="approve"`` fails with the recorded approval error,
as ``exec`` (approval policy ``never``) does. Events are shaped like the lines in
``recorded/codex_reference.jsonl``. ``FAKE_CODEX_SCENARIO``: ``reconnecting`` (a non-fatal
``error`` event), ``auth_failure`` (``turn.failed`` with a 401, exit 1).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
import tomllib
import uuid
from typing import Any

import anyio

from pairbench.testing._fake_cli import (
    NO_TOOLS,
    Server,
    parse_result,
    recorded,
    task_for,
    with_servers,
)

READING_STDIN = "Reading additional input from stdin..."
AUTH_ERROR = "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header"
RECONNECTING = (
    "Reconnecting... 1/5 (stream disconnected before completion: "
    "Transport error: error decoding response body)"
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="codex", allow_abbrev=False)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("exec", allow_abbrev=False)
    e.add_argument("prompt", nargs="?")
    e.add_argument("--json", action="store_true")
    e.add_argument("-m", "--model")
    e.add_argument("-c", "--config", action="append", default=[])
    sandboxes = ["read-only", "workspace-write", "danger-full-access"]
    e.add_argument("-s", "--sandbox", choices=sandboxes)
    for flag in ("--skip-git-repo-check", "--ephemeral", "--ignore-user-config"):
        e.add_argument(flag, action="store_true")
    e.add_argument("--strict-config", action="store_true")
    e.add_argument("--full-auto", action="store_true")
    e.add_argument("--dangerously-bypass-approvals-and-sandbox", action="store_true")
    e.add_argument("-C", "--cd")
    e.add_argument("-o", "--output-last-message")
    e.add_argument("--output-schema")
    e.add_argument("-p", "--profile")
    e.add_argument("-i", "--image", action="append", default=[])
    return p


def _key_path(key: str) -> list[str]:
    return [json.loads(p) if p.startswith('"') else p for p in re.findall(r'"[^"]*"|[^.]+', key)]


def overrides(values: list[str]) -> dict[str, Any]:
    """``-c key=value`` pairs as one nested table (values parsed as TOML)."""
    config: dict[str, Any] = {}
    for item in values:
        key, _, raw = item.partition("=")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        *parents, last = _key_path(key.strip())
        node = config
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return config


def _specs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Codex ``mcp_servers`` tables as Claude-style specs for ``with_servers``."""
    specs: dict[str, dict[str, Any]] = {}
    for name, table in (config.get("mcp_servers") or {}).items():
        if table.get("enabled", True) is False:
            continue
        if "url" in table:
            specs[name] = {"type": "http", "url": table["url"]}
            # env_http_headers: header -> the variable holding its value, as codex reads it.
            from_env = {
                h: os.environ.get(v, "") for h, v in (table.get("env_http_headers") or {}).items()
            }
            specs[name]["headers"] = {**dict(table.get("http_headers") or {}), **from_env}
        else:
            specs[name] = {"type": "stdio", "command": table["command"]}
            specs[name] |= {"args": list(table.get("args") or []), "env": table.get("env")}
    return specs


class Events:
    """Prints JSONL events shaped like the recorded lines."""

    def __init__(self) -> None:
        ref = recorded("codex_reference.jsonl")
        self.thread, self.call_started, self.call_failed, self.turn_done = (
            ref[0],
            ref[2],
            ref[3],
            ref[4],
        )
        self.items = 0
        self.context = 0
        self.usage = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
        self.usage["reasoning_output_tokens"] = 0

    def out(self, event: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def item_id(self) -> str:
        self.items += 1
        return f"item_{self.items - 1}"

    async def model_call(self, new_tokens: int, out_tokens: int) -> None:
        """One model request inside the turn: a pause, and its usage added to the turn's."""
        await anyio.sleep(0.04)
        self.usage["input_tokens"] += self.context + new_tokens
        self.usage["cached_input_tokens"] += self.context
        self.usage["output_tokens"] += out_tokens
        self.usage["reasoning_output_tokens"] += out_tokens // 3
        self.context += new_tokens + out_tokens

    def call(self, item_id: str, server: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        event = copy.deepcopy(self.call_started)
        event["item"].update(id=item_id, server=server, tool=tool, arguments=args)
        self.out(event)
        return event["item"]  # type: ignore[no-any-return]

    def done(self, item: dict[str, Any], text: str | None, error: str | None) -> None:
        event = copy.deepcopy(self.call_failed)
        event["item"].update(item)
        if error is None:
            result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
            result["structured_content"] = parse_result(text or "") or None
            event["item"].update(result=result, error=None, status="completed")
        else:
            event["item"].update(result=None, error={"message": error}, status="failed")
        self.out(event)


async def run(args: argparse.Namespace, prompt: str, scenario: str) -> int:
    config = overrides(args.config)
    approve = {
        n: t.get("default_tools_approval_mode") == "approve"
        for n, t in (config.get("mcp_servers") or {}).items()
    }
    ev = Events()
    thread = copy.deepcopy(ev.thread) | {"thread_id": str(uuid.uuid4())}
    ev.out(thread)
    ev.out({"type": "turn.started"})

    async def body(servers: list[Server]) -> int:
        if scenario == "reconnecting":
            ev.out({"type": "error", "message": RECONNECTING})
        if scenario == "auth_failure":
            await anyio.sleep(0.05)
            ev.out({"type": "error", "message": AUTH_ERROR})
            ev.out({"type": "turn.failed", "error": {"message": AUTH_ERROR}})
            return 1
        by_tool = {t: s for s in reversed(servers) for t in s.tools}
        task = task_for(prompt)
        calls = [c for c in (task.calls if task else []) if c[0] in by_tool]
        await ev.model_call(len(prompt) // 4 + 9000 + 60 * len(by_tool), 30)
        reasoning = {"id": ev.item_id(), "type": "reasoning", "text": "**Planning the lookup**"}
        ev.out({"type": "item.completed", "item": reasoning})
        answer = NO_TOOLS
        if task is not None and len(calls) == len(task.calls):
            result: dict[str, Any] = {}
            for tool, call_args in calls:
                server = by_tool[tool]
                item = ev.call(ev.item_id(), server.name, tool, call_args)
                if not approve.get(server.name):
                    ev.done(item, None, ev.call_failed["item"]["error"]["message"])
                    result = {}
                else:
                    is_error, text = await server.call(tool, call_args)
                    ev.done(item, text, text if is_error else None)
                    result = parse_result(text)
                await ev.model_call(len(json.dumps(result)) // 4 + 10, 25)
            answer = task.answer(result) if result or not task.calls else NO_TOOLS
        message = {"id": ev.item_id(), "type": "agent_message", "text": answer}
        ev.out({"type": "item.completed", "item": message})
        ev.out(copy.deepcopy(ev.turn_done) | {"usage": dict(ev.usage)})
        return 0

    return await with_servers(_specs(config), body)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)  # an unknown flag: usage on stderr, exit 2
    prompt = args.prompt
    if prompt is None or prompt == "-":
        prompt = sys.stdin.read()
    elif not sys.stdin.isatty():
        print(READING_STDIN, file=sys.stderr)
        prompt += sys.stdin.read()
    if not args.json:
        print("fake codex supports only exec --json", file=sys.stderr)
        return 1
    scenario = os.environ.get("FAKE_CODEX_SCENARIO", "")
    return anyio.run(run, args, prompt, scenario)


if __name__ == "__main__":
    sys.exit(main())
