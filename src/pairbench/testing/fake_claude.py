"""A fake ``claude`` CLI: the real flags, real MCP connections, stream-json in the recorded format.

**Usage**::

    python -m pairbench.testing.fake_claude -p "What is the title of issue #3 in the \\
        repository r?" --output-format stream-json --verbose --mcp-config mcp.json ...

It parses Claude Code's flags (an unknown flag exits 2; ``stream-json`` without ``--verbose``
fails with the real message and exit 1), connects to every server of ``--mcp-config`` with
the official ``mcp`` client (stdio: spawns the command; http: url + headers), really calls
tools (they reach the fixture's audit log) and prints events built from the lines recorded
in ``recorded/claude_reference.jsonl``, with realistic pauses. The behaviour is scripted
from the prompt (by the scripts studies register under ``pairbench.cli_scripts``);
``FAKE_CLAUDE_SCENARIO`` adds awkward cases: ``auth_failure``, ``duplicate_usage``,
``events_after_result``, ``failed_server``, ``tool_search``, ``max_turns``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
import time
import uuid
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import anyio

from pairbench.testing._fake_cli import (  # noqa: F401 - re-exported for the tests
    NO_TOOLS,
    RECORDED,
    Server,
    parse_result,
    recorded,
    task_for,
    with_servers,
)

STREAM_JSON_NEEDS_VERBOSE = (
    "Error: When using --print, --output-format=stream-json requires --verbose"
)
BUILTINS = ["Bash", "Edit", "Glob", "Grep", "Read", "Task", "TodoWrite", "WebFetch", "Write"]
MODELS = {"sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5-1", "haiku": "claude-haiku-5"}
PRICES = {  # USD per million tokens, for the client-side estimate (total_cost_usd)
    "input_tokens": 3.0,
    "cache_creation_input_tokens": 3.75,
    "cache_read_input_tokens": 0.3,
    "output_tokens": 15.0,
}
CAMEL = {"inputTokens": "input_tokens", "outputTokens": "output_tokens"} | {
    "cacheReadInputTokens": "cache_read_input_tokens",
    "cacheCreationInputTokens": "cache_creation_input_tokens",
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="claude", allow_abbrev=False)
    p.add_argument("prompt", nargs="?")
    p.add_argument("-p", "--print", action="store_true")
    p.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    p.add_argument("--input-format", choices=["text", "stream-json"], default="text")
    for flag in ("--verbose", "--strict-mcp-config", "--no-session-persistence"):
        p.add_argument(flag, action="store_true")
    p.add_argument("--include-partial-messages", action="store_true")
    p.add_argument("--mcp-config", nargs="+", action="extend", default=[])
    p.add_argument("--tools", nargs="*", action="extend")
    for flag in ("--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools"):
        dest = "disallowed" if "dis" in flag else "allowed"
        p.add_argument(flag, dest=dest, nargs="*", action="extend", default=[])
    p.add_argument("--max-turns", type=int)
    modes = ["acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan", "default"]
    p.add_argument("--permission-mode", choices=modes, default="default")
    for flag in ("--model", "--setting-sources", "--session-id", "--append-system-prompt"):
        p.add_argument(flag)
    for flag in ("--system-prompt", "--max-budget-usd"):
        p.add_argument(flag)
    return p


def _rules(values: list[str]) -> list[str]:
    return [r for v in values for r in re.split(r"[,\s]+", v) if r]


def _configs(values: list[str]) -> dict[str, dict[str, Any]]:
    servers: dict[str, dict[str, Any]] = {}
    for value in values:
        text = value if value.lstrip().startswith("{") else Path(value).read_text("utf-8")
        servers.update(json.loads(text).get("mcpServers") or {})
    return servers


class Stream:
    """Prints events shaped like the recorded lines; counts usage as a model would."""

    def __init__(self, args: argparse.Namespace, scenario: str) -> None:
        self.init_t, self.use_t, self.result_t, self.result_t0, self.synth_t = recorded(
            "claude_reference.jsonl"
        )
        self.args, self.scenario = args, scenario
        self.session = str(uuid.uuid4())
        self.model = MODELS.get(args.model or "sonnet", args.model or "claude-sonnet-5-5")
        self.t0 = time.monotonic()
        self.turns = 0
        self.api_s = 0.0
        self.context = 0
        self.usage = dict.fromkeys(PRICES, 0)

    def out(self, event: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def _stamp(self, event: dict[str, Any]) -> dict[str, Any]:
        return event | {"session_id": self.session, "uuid": str(uuid.uuid4())}

    def init(self, tools: list[str], servers: list[Server]) -> None:
        mcp = [{"name": s.name, "status": s.status, "source": "dynamic"} for s in servers]
        self.out(
            self._stamp(copy.deepcopy(self.init_t))
            | {"cwd": os.getcwd(), "tools": tools, "mcp_servers": mcp, "model": self.model}
            | {"permissionMode": self.args.permission_mode}
        )

    async def message(self, blocks: list[dict[str, Any]], new_tokens: int) -> None:
        """One model turn: a pause, then one event per content block sharing message.id."""
        pause = 0.03 + 0.01 * len(blocks)
        await anyio.sleep(pause)
        self.api_s += pause
        self.turns += 1
        out_tokens = 8 + sum(len(json.dumps(b)) for b in blocks) // 4
        first = self.context == 0
        usage = {
            "input_tokens": 3 + (new_tokens if first else 0),
            "cache_creation_input_tokens": 2400 if first else new_tokens,
            "cache_read_input_tokens": 0 if first else self.context,
            "output_tokens": out_tokens,
        }
        self.context += 2400 + new_tokens + out_tokens if first else new_tokens + out_tokens
        for key, value in usage.items():
            self.usage[key] += value
        mid = f"msg_{uuid.uuid4().hex[:24]}"
        if self.scenario == "duplicate_usage":  # a partial first occurrence, then repeats
            partial = usage | {"output_tokens": 1}
            thinking = {"type": "thinking", "thinking": "Planning.", "signature": "c2ln"}
            self.out(self._assistant(mid, thinking, partial))
        for block in blocks:
            self.out(self._assistant(mid, block, usage))

    def _assistant(self, mid: str, block: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
        event = self._stamp(copy.deepcopy(self.use_t))
        event["message"].update(id=mid, model=self.model, content=[block], usage=usage)
        return event

    def tool_result(self, tool_id: str, content: list[dict[str, Any]], is_error: bool) -> None:
        event = self._stamp(copy.deepcopy(self.result_t))
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        event["message"]["content"] = [block | ({"is_error": True} if is_error else {})]
        event["tool_use_result"] = content
        event["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        self.out(event)

    def result(self, answer: str | None, *, max_turns: bool = False) -> int:
        cost = sum(self.usage[k] * per_m for k, per_m in PRICES.items()) / 1e6
        event = self._stamp(copy.deepcopy(self.result_t0))
        event["usage"].update(self.usage)
        model_usage = {k: self.usage[v] for k, v in CAMEL.items()} | {"costUSD": round(cost, 6)}
        event.update(
            subtype="error_max_turns" if max_turns else "success",
            is_error=max_turns,
            terminal_reason="max_turns" if max_turns else "completed",
            result=answer,
            stop_reason="end_turn",
            num_turns=self.turns,
            duration_ms=round((time.monotonic() - self.t0) * 1000),
            duration_api_ms=round(self.api_s * 1000),
            total_cost_usd=round(cost, 6),
            modelUsage={self.model: model_usage | {"contextWindow": 200000}},
        )
        if max_turns:
            del event["result"]
        self.out(event)
        if self.scenario == "events_after_result":
            self.out(self._stamp({"type": "prompt_suggestion", "suggestion": "Anything else?"}))
        return 1 if max_turns else 0

    def auth_failure(self) -> int:
        self.out(self._stamp(copy.deepcopy(self.synth_t)))
        failed = self._stamp(copy.deepcopy(self.result_t0))
        failed["duration_ms"] = round((time.monotonic() - self.t0) * 1000)
        self.out(failed)
        return 1


async def converse(args: argparse.Namespace, prompt: str, scenario: str) -> int:
    stream = Stream(args, scenario)
    flags = args.tools if args.tools is not None else ["default"]
    chosen = [t for value in flags for t in value.split(",") if t]
    builtins = BUILTINS if chosen == ["default"] else chosen
    denied = set(_rules(args.disallowed))
    search_off = os.environ.get("ENABLE_TOOL_SEARCH", "").lower() == "false"
    search = scenario == "tool_search" or (bool(builtins) and not search_off)

    async def body(servers: list[Server]) -> int:
        names = {f"mcp__{s.name}__{t}": (s, t) for s in servers for t in s.tools}
        names = {n: v for n, v in names.items() if n not in denied}
        surface = [b for b in builtins if b not in denied] + (["ToolSearch"] if search else [])
        stream.init(surface + list(names), servers)
        if scenario == "auth_failure":
            return stream.auth_failure()
        return await act(stream, args, prompt, names, search)

    return await with_servers(_configs(args.mcp_config), body, skip=scenario == "failed_server")


async def act(
    stream: Stream,
    args: argparse.Namespace,
    prompt: str,
    names: dict[str, tuple[Server, str]],
    search: bool,
) -> int:
    """The scripted model: discover, call the task's tools, answer from the last result."""
    task = task_for(prompt)
    by_tool = {tool: (server, name) for name, (server, tool) in names.items()}
    calls = [c for c in (task.calls if task else []) if c[0] in by_tool]
    if task is None or len(calls) < len(task.calls):
        await stream.message([{"type": "text", "text": NO_TOOLS}], len(prompt) // 4)
        return stream.result(NO_TOOLS)
    if stream.scenario == "max_turns":
        calls = [calls[0]] * 1000
    limit = args.max_turns or 1000
    allowed = _rules(args.allowed)
    new_tokens = len(prompt) // 4 + 60 * len(names)
    if search:
        selected = sorted({by_tool[tool][1] for tool, _ in calls})
        tool_id = f"toolu_{uuid.uuid4().hex[:24]}"
        query = {"query": "select:" + ",".join(selected)}
        await stream.message(
            [{"type": "tool_use", "id": tool_id, "name": "ToolSearch", "input": query}],
            new_tokens,
        )
        refs = [{"type": "tool_reference", "tool_name": n} for n in selected]
        stream.tool_result(tool_id, refs, False)
        new_tokens = 60 * len(selected)
    result: dict[str, Any] = {}
    for i, (tool, call_args) in enumerate(calls):
        if stream.turns >= limit:
            return stream.result(None, max_turns=True)
        server, name = by_tool[tool]
        tool_id = f"toolu_{uuid.uuid4().hex[:24]}"
        say = [{"type": "text", "text": task.say}] if i == len(calls) - 1 else []
        use = {"type": "tool_use", "id": tool_id, "name": name, "input": call_args}
        await stream.message([*say, use], new_tokens)
        bypass = args.permission_mode == "bypassPermissions"
        if bypass or any(fnmatch(name, rule) for rule in allowed):
            is_error, text = await server.call(tool, call_args)
        else:  # dontAsk (and -p in general) denies what no rule pre-approves
            is_error, text = True, f"Permission to use {name} has been denied."
        stream.tool_result(tool_id, [{"type": "text", "text": text}], is_error)
        result, new_tokens = parse_result(text), len(text) // 4
    if stream.turns >= limit:
        return stream.result(None, max_turns=True)
    answer = task.answer(result) if result or not task.calls else NO_TOOLS
    await stream.message([{"type": "text", "text": answer}], new_tokens)
    return stream.result(answer)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)  # an unknown flag: usage on stderr, exit 2
    if args.output_format == "stream-json" and not args.verbose:
        print(STREAM_JSON_NEEDS_VERBOSE, file=sys.stderr)
        return 1
    if not args.print or args.output_format != "stream-json":
        print("fake claude supports only -p --output-format stream-json", file=sys.stderr)
        return 1
    prompt = args.prompt if args.prompt is not None else sys.stdin.read()
    scenario = os.environ.get("FAKE_CLAUDE_SCENARIO", "")
    return anyio.run(converse, args, prompt, scenario)


if __name__ == "__main__":
    sys.exit(main())
