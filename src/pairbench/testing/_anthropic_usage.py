"""Deterministic Messages API usage, with prompt caching modelled on the real API's rules.

The prompt is the sequence of its blocks in the order the API reads them: every tool, every
``system`` block, then every content block of every message. Each block costs
``count_tokens`` of its JSON without ``cache_control`` (a ``document`` costs the tokens of
its text, a PDF read through pypdf, plus 16), and the request costs ``FRAMING`` more.

A block carrying ``cache_control`` is a **breakpoint**: the prefix ending there is written
to the cache (per model, as the real cache is). A request reads from the cache the longest
prefix, ending at any block up to its last breakpoint, that an earlier answered request
wrote; so:

- ``cache_read_input_tokens``: that prefix (0 on the first request);
- ``cache_creation_input_tokens``: from there to the last breakpoint;
- ``input_tokens``: the blocks after the last breakpoint, plus ``FRAMING``.

A request without breakpoints is all ``input_tokens``. The real API's 1024-token minimum,
its 20-block lookback and the cache's five-minute lifetime are not modelled.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Mapping
from typing import Any

from pairbench.testing._anthropic_convert import blocks, document_data
from pairbench.testing._chat_double import count_tokens
from pairbench.testing._messages import file_text as _file_text

FRAMING = 3
"""Uncached tokens every request costs beyond its blocks (the API's message framing)."""
_DOCUMENT = 16


def _bare(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def prompt_blocks(body: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(where, block) for the request's blocks in the order the API reads them: tools
    (``tool``), system (``system``), then messages (their role)."""
    out = [("tool", dict(t)) for t in body.get("tools") or [] if isinstance(t, dict)]
    out += [("system", b) for b in blocks(body.get("system"))]
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            role = str(message.get("role"))
            out += [(role, b) for b in blocks(message.get("content"))]
    return out


class PromptCache:
    """The prefixes earlier requests wrote, and the usage they imply for a new request."""

    def __init__(self) -> None:
        self._written: set[str] = set()
        self._lock = threading.Lock()
        self._document_tokens: dict[str, int] = {}

    def _cost(self, block: Mapping[str, Any]) -> int:
        if block.get("type") != "document":
            return count_tokens(_bare(block))
        found = document_data(block)
        if found is None:
            return count_tokens(_bare(block))
        media_type, data = found
        key = hashlib.sha256(data).hexdigest()
        if key not in self._document_tokens:  # a PDF is read once, not on every turn
            uri = f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
            self._document_tokens[key] = count_tokens(_file_text({"file_data": uri}))
        return self._document_tokens[key] + _DOCUMENT

    def input_tokens(self, body: Mapping[str, Any]) -> int:
        """The whole prompt's tokens (``/v1/messages/count_tokens``)."""
        return sum(self._cost(b) for _, b in prompt_blocks(body)) + FRAMING

    def usage(self, body: Mapping[str, Any], *, write: bool = True) -> dict[str, int]:
        """The input side of a reply's usage (``write``: remember this request's prefixes)."""
        parts = prompt_blocks(body)
        digest = hashlib.sha256(str(body.get("model")).encode())
        prefixes: list[str] = []
        ends: list[int] = []
        total = 0
        for where, block in parts:
            digest.update(json.dumps([where, _bare(block)], sort_keys=True).encode())
            prefixes.append(digest.copy().hexdigest())
            total += self._cost(block)
            ends.append(total)
        breakpoints = [i for i, (_, b) in enumerate(parts) if b.get("cache_control")]
        if not breakpoints:
            return {"input_tokens": total + FRAMING, "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0}  # fmt: skip
        last = breakpoints[-1]
        with self._lock:
            hit = max((i for i in range(last + 1) if prefixes[i] in self._written), default=-1)
            if write:
                self._written.update(prefixes[i] for i in breakpoints)
        read = ends[hit] if hit >= 0 else 0
        return {
            "input_tokens": total - ends[last] + FRAMING,
            "cache_creation_input_tokens": ends[last] - read,
            "cache_read_input_tokens": read,
        }


def output_tokens(content: list[dict[str, Any]]) -> int:
    """A reply's output tokens: its text, and each tool call's name and input."""
    spent = 0
    for block in content:
        if block.get("type") == "text":
            spent += count_tokens(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            spent += count_tokens({"name": block.get("name"), "input": block.get("input")})
    return max(1, spent)
