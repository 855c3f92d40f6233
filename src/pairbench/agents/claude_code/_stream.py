"""Claude Code ``--output-format stream-json`` lines to normalized transcript events (pure).

**Usage**::

    parser = ClaudeStreamParser({"tracker": "stdio"}, tool_search=False, started_t=0.0)
    for t, line in stamped_lines:                  # t: monotonic arrival time, seconds
        for event in parser.feed(t, line):
            transcript.emit(event.kind, t=event.t, **event.fields)
    for event in parser.finish(t_end): ...
    parser.summary.verdict()                       # ok | max_turns | api_error | error | no_result

Forward-compatible: unknown event types and content blocks are counted and ignored, and
lines after ``result`` (``prompt_suggestion``...) are still read. Success is judged from
``is_error`` and ``terminal_reason``, never from ``subtype`` alone (an API failure arrives as
``subtype: "success"`` with ``is_error: true``). Usage per model message is deduplicated by
``message.id``, keeping the last occurrence; totals come from the ``result`` event.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pairbench.agents._cli import Event, Stop, Verdict
from pairbench.store._records import Metric

SOURCE = "claude-code result event"
DEDUP_SOURCE = "claude-code assistant events (deduplicated by message.id)"
COST_ESTIMATOR = "claude-code client estimate (total_cost_usd)"
TOOL_SEARCH = "ToolSearch"
INIT_BASIS = "process spawn to the init event (includes CLI start-up)"
_USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
_METRIC_OF = {
    "input_tokens": "uncached_input_tokens",
    "cache_creation_input_tokens": "cache_creation_input_tokens",
    "cache_read_input_tokens": "cache_read_input_tokens",
    "output_tokens": "output_tokens",
}
"""Usage key of the Messages API -> pairbench's metric (``input_tokens`` is uncached only)."""
_TRANSPORT = re.compile(
    r"not connected|connection (closed|reset|refused)|ECONNREFUSED|ECONNRESET|fetch failed|"
    r"socket hang up|MCP error -3200[01]",
    re.IGNORECASE,
)
_AUTH = re.compile(r"authenticat|not logged in|/login|api key|401|403|unauthori[sz]ed", re.I)


def tool_text(content: Any) -> str:
    """The text of a ``tool_result`` content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_reference":
            parts.append(f"tool_reference:{block.get('tool_name', '')}")
    return "\n".join(parts)


@dataclass
class ClaudeSummary:
    """What the whole stream said; ``verdict`` and the metrics are read from it."""

    init: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    texts: list[str] = field(default_factory=list)
    api_error: str | None = None
    api_error_text: str = ""
    usage_by_message: dict[str, dict[str, int]] = field(default_factory=dict)
    tool_searches: int = 0
    api_retries: list[dict[str, Any]] = field(default_factory=list)
    model_ids: list[str] = field(default_factory=list)
    lines: int = 0
    after_result: int = 0
    ignored: Counter[str] = field(default_factory=Counter)

    @property
    def models(self) -> tuple[str, ...]:
        """The model ids of the real model messages, in order of first appearance."""
        return tuple(dict.fromkeys(self.model_ids))

    @property
    def model_turns(self) -> int:
        """Distinct real (non-synthetic) model messages."""
        return len(self.usage_by_message)

    def verdict(self) -> Verdict:
        r = self.result
        if r is None:
            if self.api_error:
                return self._api(self.api_error_text or self.api_error)
            return Verdict("no_result", "claude-code ended without a result event")
        reason = r.get("terminal_reason")
        detail = str(r.get("result") or "; ".join(map(str, r.get("errors") or [])) or "")
        if reason == "max_turns" or r.get("subtype") == "error_max_turns":
            return Verdict("max_turns", f"max turns: stopped after {r.get('num_turns')} turns")
        if reason == "api_error" or (self.api_error and r.get("is_error")):
            return self._api(detail or self.api_error_text or str(self.api_error))
        if r.get("is_error"):
            why = reason or r.get("subtype") or "is_error"
            return Verdict("error", f"claude-code reported an error ({why}): {detail}".rstrip(": "))
        if reason not in (None, "completed"):
            return Verdict("error", f"claude-code ended with terminal_reason {reason!r}")
        return Verdict("ok")

    def _api(self, detail: str) -> Verdict:
        kind = self.api_error or "api_error"
        auth = kind == "authentication_failed" or bool(_AUTH.search(detail))
        return Verdict("api_error", f"{detail} ({kind})", auth=auth)

    def final_answer(self) -> str | None:
        if self.result is not None and isinstance(self.result.get("result"), str):
            return str(self.result["result"])
        return self.texts[-1] if self.texts else None

    def usage_totals(self) -> tuple[dict[str, int], str] | None:
        """Token totals and their source: the result event, else the deduplicated messages."""
        if self.result is not None and isinstance(self.result.get("usage"), dict):
            usage = self.result["usage"]
            return {k: int(usage.get(k) or 0) for k in _USAGE_KEYS}, SOURCE
        if self.usage_by_message:
            sums = {k: sum(u[k] for u in self.usage_by_message.values()) for k in _USAGE_KEYS}
            return sums, DEDUP_SOURCE
        return None

    def metrics(self) -> dict[str, Metric]:
        """input/output tokens and turns (measured), cost (estimated), agent_ms (measured)."""
        out: dict[str, Metric] = {}
        totals = self.usage_totals()
        if totals is None:
            none = Metric.missing("claude-code reported no usage")
            for key in _METRIC_OF.values():
                out[key] = none
            out["input_tokens"] = out["total_tokens"] = none
        else:
            usage, source = totals
            total_in = sum(usage[k] for k in _USAGE_KEYS[:3])  # input excludes cache traffic
            for key, metric in _METRIC_OF.items():
                out[metric] = Metric.measured(usage[key], source)
            out["input_tokens"] = Metric.measured(total_in, source)
            out["total_tokens"] = Metric.measured(total_in + usage["output_tokens"], source)
        r = self.result or {}
        cost = r.get("total_cost_usd")
        out["cost_usd"] = (
            Metric(value=float(cost), provenance="estimated", estimator=COST_ESTIMATOR)
            if isinstance(cost, int | float)
            else Metric.missing("claude-code reported no total_cost_usd")
        )
        ms = r.get("duration_ms")
        out["agent_ms"] = (
            Metric.measured(float(ms), SOURCE)
            if isinstance(ms, int | float)
            else Metric.missing("claude-code reported no duration_ms")
        )
        turns = r.get("num_turns")
        out["turns"] = (
            Metric.measured(int(turns), SOURCE)
            if isinstance(turns, int)
            else Metric.missing("claude-code reported no num_turns")
        )
        return out


def _failure(t: float, server: str | None, failure: str, detail: str) -> Event:
    return Event(t, "transport_failure", {"server": server, "failure": failure, "detail": detail})


class ClaudeStreamParser:
    """Incremental: ``feed`` each stamped line, then ``finish`` once at EOF."""

    def __init__(
        self, transports: dict[str, str], *, tool_search: bool, started_t: float = 0.0
    ) -> None:
        self.transports = dict(transports)
        """Configured server name -> ``stdio``/``http``."""
        self.tool_search = tool_search
        self.started_t = started_t
        self.summary = ClaudeSummary()
        self._pending: dict[str, tuple[float, str | None, str]] = {}
        self._search_on = False
        self.stop: Stop | None = None
        """Set when the stream shows the attempt cannot go on (see ``_init``, ``_retry``)."""

    def feed(self, t: float, line: str) -> list[Event]:
        s = self.summary
        s.lines += 1
        if s.result is not None:
            s.after_result += 1
        try:
            data = json.loads(line)
        except ValueError:
            return [Event(t, "stdout", {"line": line})] if line.strip() else []
        if not isinstance(data, dict):
            s.ignored["non-object"] += 1
            return []
        kind = data.get("type")
        if kind == "system" and data.get("subtype") == "init":
            return self._init(t, data)
        if kind == "assistant":
            return self._assistant(t, data)
        if kind == "user":
            return self._user(t, data)
        if kind == "result":
            s.result = data
            return []
        if kind == "system" and data.get("subtype") == "api_retry":
            return self._retry(t, data)
        s.ignored[f"{kind}/{data.get('subtype')}" if kind == "system" else str(kind)] += 1
        return []

    def finish(self, t: float) -> list[Event]:
        s = self.summary
        events: list[Event] = []
        totals = s.usage_totals()
        if totals is not None:
            usage, source = totals
            input_total = sum(usage[k] for k in _USAGE_KEYS[:3])
            per_message = [{"message_id": k, **v} for k, v in s.usage_by_message.items()]
            fields: dict[str, Any] = {
                "input_tokens": input_total,
                "output_tokens": usage["output_tokens"],
                "uncached_input_tokens": usage["input_tokens"],
                "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                "cache_read_input_tokens": usage["cache_read_input_tokens"],
                "source": source,
                "provenance": "measured",
                "per_message": per_message,
            }
            if s.result is not None and s.result.get("modelUsage"):
                fields["model_usage"] = s.result["modelUsage"]
            events.append(Event(t, "usage", fields))
        cost = (s.result or {}).get("total_cost_usd")
        if isinstance(cost, int | float):
            events.append(
                Event(
                    t,
                    "usage",
                    {"cost_usd": cost, "estimator": COST_ESTIMATOR, "provenance": "estimated"},
                )
            )
        stream: dict[str, Any] = {"lines": s.lines, "events_after_result": s.after_result}
        stream |= {"ignored": dict(s.ignored), "tool_searches": s.tool_searches}
        events.append(Event(t, "agent_stream", stream))
        return events

    # -- event types ---------------------------------------------------------------------

    def _init(self, t: float, data: dict[str, Any]) -> list[Event]:
        self.summary.init = data
        tools = [str(x) for x in data.get("tools") or []]
        self._search_on = self.tool_search and TOOL_SEARCH in tools
        keys = ("session_id", "model", "claude_code_version", "permissionMode")
        events = [Event(t, "agent_init", {k: data.get(k) for k in keys} | {"tools": tools})]
        if TOOL_SEARCH in tools and not self.tool_search:
            text = "ENABLE_TOOL_SEARCH is pinned off, yet init lists ToolSearch"
            events.append(Event(t, "warning", {"text": text}))
        ms = round((t - self.started_t) * 1000, 3)
        seen: set[str] = set()
        for entry in data.get("mcp_servers") or []:
            name, status = str(entry.get("name")), str(entry.get("status"))
            seen.add(name)
            prefix = f"mcp__{name}__"
            own = [n[len(prefix) :] for n in tools if n.startswith(prefix)]
            ok = status == "connected"
            connect: dict[str, Any] = {"server": name}
            connect["transport"] = self.transports.get(name, "unknown")
            connect |= {"ms": ms, "ms_basis": INIT_BASIS, "ok": ok, "status": status}
            connect |= {"tools": own if ok else []}
            if not ok:
                connect["error"] = f"claude-code init reports status {status!r}"
            events.append(Event(t, "mcp_connect", connect))
            if not ok:
                events.append(_failure(t, name, "connect", f"init status {status!r}"))
                if self.stop is None and name in self.transports:
                    why = f"its MCP server {name!r} connected (init status {status!r})"
                    self.stop = Stop(why, "mcp")
            elif not own:
                events.append(_failure(t, name, "no_tools", "init lists no mcp__ tools for it"))
        for name in sorted(set(self.transports) - seen):
            events.append(_failure(t, name, "missing", "absent from init.mcp_servers"))
            if self.stop is None:
                self.stop = Stop(f"its MCP server {name!r} was listed (absent from init)", "mcp")
        for err in data.get("mcp_server_errors") or []:
            events.append(_failure(t, None, "config", str(err)))
        return events

    def _retry(self, t: float, data: dict[str, Any]) -> list[Event]:
        """``system/api_retry``: the CLI will retry a failed model request. A connection
        failure (``error_status`` null) or an auth rejection (401/403) will not heal by
        waiting, so the attempt stops at once; rate limits and 5xx are left to its retries."""
        status = data.get("error_status")
        fields = {k: data.get(k) for k in ("attempt", "max_retries", "retry_delay_ms", "error")}
        self.summary.api_retries.append(fields | {"error_status": status})
        events = [Event(t, "model_retry", fields | {"error_status": status})]
        if self.stop is None and (status is None or status in (401, 403)):
            what = "no connection" if status is None else f"HTTP {status}"
            self.stop = Stop(f"api_retry: {what} ({data.get('error')})", "endpoint")
        return events

    def _split(self, name: str) -> tuple[str | None, str]:
        """``mcp__<server>__<tool>`` -> (server, tool); a built-in -> (None, name)."""
        for server in sorted(self.transports, key=len, reverse=True):
            if name.startswith(f"mcp__{server}__"):
                return server, name[len(f"mcp__{server}__") :]
        if name.startswith("mcp__") and "__" in name[5:]:
            server, tool = name[5:].split("__", 1)
            return server, tool
        return None, name

    def _assistant(self, t: float, data: dict[str, Any]) -> list[Event]:
        s = self.summary
        message = data.get("message") or {}
        error = data.get("error") or message.get("error")
        content = message.get("content") or []
        if error or data.get("is_api_error_message") or message.get("model") == "<synthetic>":
            s.api_error = str(error or "api_error")
            s.api_error_text = tool_text(content)
            return [Event(t, "error", {"message": s.api_error_text, "api_error": s.api_error})]
        if message.get("model"):
            s.model_ids.append(str(message["model"]))
        usage = message.get("usage")
        if isinstance(usage, dict) and message.get("id"):
            # Blocks of one response share message.id and repeat (or partially carry) its
            # usage: the last occurrence wins, so nothing is counted twice.
            s.usage_by_message[str(message["id"])] = {
                k: int(usage.get(k) or 0) for k in _USAGE_KEYS
            }
        events: list[Event] = []
        for block in content if isinstance(content, list) else []:
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text":
                s.texts.append(str(block.get("text", "")))
                events.append(Event(t, "message", {"text": s.texts[-1]}))
            elif btype == "tool_use":
                events.append(self._tool_use(t, block, data.get("parent_tool_use_id")))
            else:
                s.ignored[f"block:{btype}"] += 1
        return events

    def _tool_use(self, t: float, block: dict[str, Any], parent: Any) -> Event:
        call_id, name = str(block.get("id")), str(block.get("name", ""))
        raw = block.get("input")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if name == TOOL_SEARCH and self._search_on:
            self.summary.tool_searches += 1
            self._pending[call_id] = (t, None, TOOL_SEARCH)
            return Event(t, "tool_search", {"id": call_id, "query": args.get("query")})
        server, tool = self._split(name)
        self._pending[call_id] = (t, server, tool)
        fields = {"id": call_id, "server": server, "tool": tool, "arguments": args}
        if parent is not None:
            fields["parent_tool_use_id"] = parent
        return Event(t, "tool_call", fields)

    def _user(self, t: float, data: dict[str, Any]) -> list[Event]:
        content = (data.get("message") or {}).get("content")
        events: list[Event] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id"))
            sent = self._pending.pop(call_id, None)
            text = tool_text(block.get("content"))
            is_error = bool(block.get("is_error"))
            client_ms = None if sent is None else round((t - sent[0]) * 1000, 3)
            server, tool = (sent[1], sent[2]) if sent else (None, "")
            if sent is not None and tool == TOOL_SEARCH and server is None and self._search_on:
                refs = block.get("content")
                selected = [
                    b.get("tool_name")
                    for b in (refs if isinstance(refs, list) else [])
                    if isinstance(b, dict) and b.get("type") == "tool_reference"
                ]
                fields = {"id": call_id, "selected": selected, "client_ms": client_ms}
                events.append(Event(t, "tool_search_result", fields | {"is_error": is_error}))
                continue
            result = {"id": call_id, "server": server, "tool": tool, "is_error": is_error}
            events.append(Event(t, "tool_result", result | {"text": text, "client_ms": client_ms}))
            if is_error and server is not None and _TRANSPORT.search(text):
                events.append(_failure(t, server, "tool_call", text[:300]))
        return events
