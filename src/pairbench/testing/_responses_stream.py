"""The Responses wire format of the double's replies: output items and their SSE events.

A reply is a ``message`` with one ``output_text`` part, or one ``function_call`` per call
(``namespace`` set for a namespaced tool: codex 0.171.0 calls MCP tools that way). The stream
is what the API sends and codex parses: ``response.created``, ``response.in_progress``, per
item ``response.output_item.added``, the text's ``content_part``/``output_text`` events or
the call's ``function_call_arguments`` events (each delta in two halves),
``response.output_item.done``, then ``response.completed`` with the usage; every event
carries a ``sequence_number``.
"""

from __future__ import annotations

import json
from typing import Any

from pairbench.testing._responses_convert import Reply


def output_items(n: int, reply: Reply) -> list[dict[str, Any]]:
    """A reply as the output items of response number ``n`` (ids unique per response)."""
    if reply.calls:
        out = []
        for i, call in enumerate(reply.calls):
            item: dict[str, Any] = {"id": f"fc_{n}_{i}", "type": "function_call",
                                    "status": "completed", "arguments": call.arguments,
                                    "call_id": f"call_{n}_{i}", "name": call.name}  # fmt: skip
            if call.namespace is not None:
                item["namespace"] = call.namespace
            out.append(item)
        return out
    part = {"type": "output_text", "text": reply.text or "", "annotations": [], "logprobs": []}
    return [{"id": f"msg_{n}", "type": "message", "status": "completed", "role": "assistant",
             "content": [part]}]  # fmt: skip


def stream_events(response: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stream of one response: every event codex reads, in the API's order."""
    start = {**response, "status": "in_progress", "output": [], "usage": None}
    out: list[dict[str, Any]] = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for index, item in enumerate(items):
        at = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            empty = {**item["content"][0], "text": ""}
            out.append({"type": "response.output_item.added", "output_index": index,
                        "item": {**item, "status": "in_progress", "content": []}})  # fmt: skip
            out.append({"type": "response.content_part.added", **at, "content_index": 0,
                        "part": empty})  # fmt: skip
            half = len(text) // 2
            for delta in (text[:half], text[half:]):
                out.append({"type": "response.output_text.delta", **at, "content_index": 0,
                            "delta": delta, "logprobs": []})  # fmt: skip
            out.append({"type": "response.output_text.done", **at, "content_index": 0,
                        "text": text, "logprobs": []})  # fmt: skip
            out.append({"type": "response.content_part.done", **at, "content_index": 0,
                        "part": item["content"][0]})  # fmt: skip
        else:
            args = item["arguments"]
            out.append({"type": "response.output_item.added", "output_index": index,
                        "item": {**item, "status": "in_progress", "arguments": ""}})  # fmt: skip
            half = len(args) // 2
            for delta in (args[:half], args[half:]):
                out.append({"type": "response.function_call_arguments.delta", **at,
                            "delta": delta})  # fmt: skip
            out.append({"type": "response.function_call_arguments.done", **at,
                        "arguments": args})  # fmt: skip
        out.append({"type": "response.output_item.done", "output_index": index, "item": item})
    out.append({"type": "response.completed", "response": response})
    return [{**event, "sequence_number": i} for i, event in enumerate(out)]


def sse_lines(events: list[dict[str, Any]]) -> list[str]:
    """Each event as one SSE block: ``event: <type>`` and ``data: <json>``."""
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]
