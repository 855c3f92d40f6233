"""Codex ``codex exec --json`` JSONL to normalized transcript events (pure).

**Usage**::

    parser = CodexEventParser()
    for t, line in stamped_lines:                  # t: monotonic arrival time, seconds
        for event in parser.feed(t, line): ...
    for event in parser.finish(t_end): ...
    parser.summary.verdict()

Codex events carry no timestamps and no cost: a tool call's latency is the gap between the
arrival of ``item.started`` and ``item.completed`` of the same item id. Usage is summed over
``turn.completed`` events (``input_tokens`` includes ``cached_input_tokens``). A top-level
``error`` event is not fatal ("Reconnecting... 2/5"); ``turn.failed`` is.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pairbench.agents._cli import Event, Stop, Verdict
from pairbench.store._records import Metric

SOURCE = "codex turn.completed events"
_USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)
_UNAVAILABLE = re.compile(
    r"unavailable|not available|unknown mcp server|failed to start|not connected|"
    r"connection (closed|reset|refused)|transport|timed out",
    re.IGNORECASE,
)
_AUTH = re.compile(
    r"401|403|unauthori[sz]ed|authenticat|api key|not logged in|login|insufficient_quota",
    re.IGNORECASE,
)
_RECONNECT = re.compile(r"^Reconnecting\.\.\.", re.IGNORECASE)
_NO_NETWORK = re.compile(r"waiting for network", re.IGNORECASE)
_UNREACHABLE = re.compile(
    r"Connection failed|error sending request|connection refused|dns error|"
    r"failed to lookup address|status 40[13]\b|insufficient_quota",
    re.IGNORECASE,
)
"""Reconnect reasons that waiting does not heal: no connection, DNS, auth, quota (a 5xx or
a rate limit is left to codex's own retries)."""
_BUILTIN = {"command_execution": "command", "file_change": "changes", "web_search": "query"}


def _content_text(result: Any) -> str:
    if not isinstance(result, dict):
        return ""
    parts = [
        str(b.get("text", ""))
        for b in result.get("content") or []
        if isinstance(b, dict) and b.get("type") == "text"
    ]
    return "\n".join(parts)


@dataclass
class CodexSummary:
    thread_id: str | None = None
    messages: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    turns_completed: int = 0
    turn_failed: str | None = None
    errors: list[str] = field(default_factory=list)
    model_items: int = 0
    models: list[str] = field(default_factory=list)
    """Model ids codex reports (its events name none today: filled when they do)."""
    lines: int = 0
    ignored: Counter[str] = field(default_factory=Counter)

    @property
    def model_call_succeeded(self) -> bool:
        return self.turns_completed > 0 or self.model_items > 0

    def verdict(self) -> Verdict:
        if self.turn_failed is not None:
            auth = bool(_AUTH.search(self.turn_failed))
            detail = f"codex turn failed: {self.turn_failed}"
            if auth or not self.model_call_succeeded:
                return Verdict("api_error", detail, auth=auth)
            return Verdict("error", detail)
        if self.turns_completed == 0:
            last = f": {self.errors[-1]}" if self.errors else ""
            return Verdict("no_result", f"codex ended without turn.completed{last}")
        return Verdict("ok")

    def final_answer(self) -> str | None:
        return self.messages[-1] if self.messages else None

    def metrics(self) -> dict[str, Metric]:
        out: dict[str, Metric] = {}
        if self.turns_completed:
            # input_tokens includes the cached part; a cache write is reported only by
            # builds that emit cache_write_input_tokens.
            u = self.usage
            total_in, cached, output = (
                u.get("input_tokens", 0),
                u.get("cached_input_tokens", 0),
                u.get("output_tokens", 0),
            )
            out["input_tokens"] = Metric.measured(total_in, SOURCE)
            out["output_tokens"] = Metric.measured(output, SOURCE)
            out["cache_read_input_tokens"] = Metric.measured(cached, SOURCE)
            out["total_tokens"] = Metric.measured(total_in + output, SOURCE)
            if "cache_write_input_tokens" in u:
                written = u["cache_write_input_tokens"]
                out["cache_creation_input_tokens"] = Metric.measured(written, SOURCE)
                out["uncached_input_tokens"] = Metric.measured(total_in - cached - written, SOURCE)
            else:
                why = "this codex build reports no cache writes (cache_write_input_tokens)"
                out["cache_creation_input_tokens"] = Metric.missing(why)
                out["uncached_input_tokens"] = Metric.measured(total_in - cached, SOURCE)
        else:
            none = Metric.missing("codex completed no turn, so it reported no usage")
            for key in (
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
                "uncached_input_tokens",
                "total_tokens",
            ):
                out[key] = none
        out["cost_usd"] = Metric.missing("codex exec --json reports no cost")
        out["agent_ms"] = Metric.missing("codex exec --json reports no duration")
        out["turns"] = Metric.missing(
            "codex exec --json reports one turn per prompt, not its model calls"
        )
        return out


class CodexEventParser:
    """Incremental: ``feed`` each stamped line, then ``finish`` once at EOF.

    ``stop`` is set when codex says it cannot reach its model: "Reconnecting... waiting for
    network" always (it loops on it forever), and "Reconnecting... N/5" for a connection,
    DNS, auth or quota failure while no model call has succeeded yet (in this attempt, or
    in the run: ``model_call_succeeded``). Waiting would only burn the trial timeout.
    """

    def __init__(self, *, model_call_succeeded: bool = False) -> None:
        self.summary = CodexSummary()
        self._started: dict[str, float] = {}
        self._run_succeeded = model_call_succeeded
        self.stop: Stop | None = None

    def feed(self, t: float, line: str) -> list[Event]:
        s = self.summary
        s.lines += 1
        try:
            data = json.loads(line)
        except ValueError:
            return [Event(t, "stdout", {"line": line})] if line.strip() else []
        if not isinstance(data, dict):
            s.ignored["non-object"] += 1
            return []
        kind = str(data.get("type"))
        if kind == "thread.started":
            s.thread_id = str(data.get("thread_id"))
            return [Event(t, "agent_init", {"thread_id": s.thread_id})]
        if kind == "turn.completed":
            s.turns_completed += 1
            for key, value in (data.get("usage") or {}).items():
                if isinstance(value, int):
                    s.usage[key] = s.usage.get(key, 0) + value
            return []
        if kind == "turn.failed":
            s.turn_failed = str((data.get("error") or {}).get("message", "turn failed"))
            return [Event(t, "error", {"message": s.turn_failed})]
        if kind == "error":  # not fatal: "Reconnecting... 1/5 (...)"
            text = str(data.get("message", ""))
            s.errors.append(text)
            succeeded = self._run_succeeded or s.model_call_succeeded
            hopeless = _NO_NETWORK.search(text) or _UNREACHABLE.search(text)
            if (
                self.stop is None
                and _RECONNECT.search(text)
                and hopeless
                and (not succeeded or _NO_NETWORK.search(text))
            ):
                self.stop = Stop(text[:300], "endpoint")
            return [Event(t, "message", {"text": text, "level": "error"})]
        if kind in ("item.started", "item.completed") and isinstance(data.get("item"), dict):
            return self._item(t, kind == "item.completed", data["item"])
        if kind not in ("turn.started", "item.updated"):
            s.ignored[kind] += 1
        return []

    def finish(self, t: float) -> list[Event]:
        s = self.summary
        events: list[Event] = []
        if s.turns_completed:
            usage = {k: s.usage[k] for k in _USAGE_KEYS if k in s.usage}
            fields = {**usage, "source": SOURCE, "provenance": "measured"}
            fields["turns"] = s.turns_completed
            events.append(Event(t, "usage", fields))
        stream = {"lines": s.lines, "ignored": dict(s.ignored), "non_fatal_errors": len(s.errors)}
        events.append(Event(t, "agent_stream", stream))
        return events

    def _item(self, t: float, completed: bool, item: dict[str, Any]) -> list[Event]:
        s = self.summary
        item_id, itype = str(item.get("id")), str(item.get("type"))
        if itype == "agent_message":
            if not completed:
                return []
            s.model_items += 1
            s.messages.append(str(item.get("text", "")))
            return [Event(t, "message", {"text": s.messages[-1]})]
        if itype == "mcp_tool_call":
            server, tool = item.get("server"), str(item.get("tool", ""))
            raw = item.get("arguments")
            args: dict[str, Any] = raw if isinstance(raw, dict) else {}
            return self._call(t, completed, item, item_id, server, tool, args)
        if itype in _BUILTIN:
            arg = item.get(_BUILTIN[itype])
            return self._call(t, completed, item, item_id, None, itype, {_BUILTIN[itype]: arg})
        if itype == "error" and completed:
            s.errors.append(str(item.get("message", "")))
            return [Event(t, "message", {"text": s.errors[-1], "level": "error"})]
        if completed:
            s.ignored[f"item:{itype}"] += 1
        return []

    def _call(
        self,
        t: float,
        completed: bool,
        item: dict[str, Any],
        item_id: str,
        server: Any,
        tool: str,
        args: dict[str, Any],
    ) -> list[Event]:
        events: list[Event] = []
        if item_id not in self._started:  # a call seen only at completion has no latency
            self.summary.model_items += 1
            self._started[item_id] = t if not completed else float("nan")
            call = {"id": item_id, "server": server, "tool": tool, "arguments": args}
            events.append(Event(t, "tool_call", call))
        if not completed:
            return events
        start = self._started[item_id]
        client_ms = None if start != start else round((t - start) * 1000, 3)  # nan: unknown
        error = item.get("error") if isinstance(item.get("error"), dict) else None
        result = item.get("result")
        failed = item.get("status") == "failed" or error is not None
        failed = failed or (isinstance(result, dict) and bool(result.get("is_error")))
        if error is not None:
            text = str(error.get("message", ""))
        elif "aggregated_output" in item:
            text = str(item.get("aggregated_output") or "")
        else:
            text = _content_text(result)
        fields = {"id": item_id, "server": server, "tool": tool, "is_error": failed}
        events.append(Event(t, "tool_result", fields | {"text": text, "client_ms": client_ms}))
        if server is not None and error is not None and _UNAVAILABLE.search(text):
            failure = {"server": server, "failure": "unavailable", "detail": text[:300]}
            events.append(Event(t, "transport_failure", failure))
        return events
