"""A Messages API reply as the server-sent events the real API streams.

``message_start`` (the message with empty content and the input side of usage,
``output_tokens: 1``), ``ping``, per block ``content_block_start`` / ``_delta`` (text in
``text_delta`` halves; a tool's input as ``input_json_delta`` pieces, the first one empty, as
the real API sends) / ``_stop``, ``message_delta`` (stop reason and the whole usage), and
``message_stop``.
"""

from __future__ import annotations

import json
from typing import Any


def _event(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


def _halves(text: str) -> list[str]:
    half = len(text) // 2
    return [part for part in (text[:half], text[half:]) if part]


def sse_events(message: dict[str, Any]) -> list[str]:
    """The events of one reply (``message``: the non-streaming JSON reply)."""
    usage = dict(message["usage"])
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 1}
    out = [_event("message_start", {"message": start}), _event("ping", {})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            pieces = ["", *_halves(json.dumps(block["input"]))]
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        else:
            opening = {**block, "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _halves(block.get("text", ""))]
        out.append(_event("content_block_start", {"index": i, "content_block": opening}))
        out += [_event("content_block_delta", {"index": i, "delta": d}) for d in deltas]
        out.append(_event("content_block_stop", {"index": i}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    out.append(_event("message_delta", {"delta": delta, "usage": usage}))
    out.append(_event("message_stop", {}))
    return out
