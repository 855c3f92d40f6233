"""Messages API requests in the Chat Completions shape ``decide`` reads, and its replies back.

``decide`` (the chat double's agent brain) reads ``messages`` with roles user / assistant /
tool, assistant ``tool_calls`` (``function.name`` and ``function.arguments`` as JSON text),
``tools[].function.name`` and file parts ``{"type": "file", "file": {"filename",
"file_data": "data:<media type>;base64,..."}}``. A Messages API request says the same with
``system``, content blocks (``text``, ``tool_use``, ``tool_result``, ``document``) and
``tools[].input_schema``; this module maps one onto the other, and the reply back onto
``text`` and ``tool_use`` content blocks.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pairbench.testing._messages import text as _text

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def blocks(content: Any) -> list[dict[str, Any]]:
    """A message's (or ``system``'s) content as a list of blocks (a string is one text block).

    A ``document`` inside a ``tool_result``'s content (Claude Code's ``Read`` of a PDF) is
    lifted out: the ``tool_result`` without it, then the document as a block of its own, so
    it is recorded, counted and read like a top-level one.

    >>> doc = {"type": "document", "source": {"type": "text", "data": "x"}}
    >>> [b["type"] for b in blocks([{"type": "tool_result", "content": [doc]}])]
    ['tool_result', 'document']
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    out: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        inner = block.get("content")
        if block.get("type") != "tool_result" or not isinstance(inner, list):
            out.append(block)
            continue
        docs = [b for b in inner if isinstance(b, dict) and b.get("type") == "document"]
        if not docs:
            out.append(block)
            continue
        rest = [b for b in inner if not (isinstance(b, dict) and b.get("type") == "document")]
        out.append({**block, "content": rest})
        out.extend(docs)
    return out


def document_data(block: Mapping[str, Any]) -> tuple[str, bytes] | None:
    """(media type, decoded bytes) of a ``document`` block's base64 or text source."""
    source = block.get("source") or {}
    kind = source.get("type")
    if kind == "base64":
        try:
            data = base64.b64decode(str(source.get("data") or ""), validate=True)
        except ValueError:
            return None
        return str(source.get("media_type") or "application/octet-stream"), data
    if kind == "text":
        text = str(source.get("data") or "")
        return str(source.get("media_type") or "text/plain"), text.encode("utf-8")
    return None


def _file_part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    found = document_data(block)
    if found is None:
        return None
    media_type, data = found
    name = str(block.get("title") or ("document.pdf" if media_type.endswith("pdf") else "doc"))
    encoded = base64.b64encode(data).decode("ascii")
    return {
        "type": "file",
        "file": {"filename": name, "file_data": f"data:{media_type};base64,{encoded}"},
    }


def _user_parts(content: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tool messages, other content parts) of one user message."""
    tools: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in blocks(content):
        kind = block.get("type")
        if kind == "tool_result":
            text = _text(blocks(block.get("content")))
            call_id = block.get("tool_use_id")
            tools.append({"role": "tool", "tool_call_id": call_id, "content": text})
        elif kind == "text":
            parts.append({"type": "text", "text": str(block.get("text") or "")})
        elif kind == "document":
            part = _file_part(block)
            if part is not None:
                parts.append(part)
    return tools, parts


def to_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions request ``decide`` reads for a Messages API request body.

    >>> chat = to_chat({"model": "m", "system": "Be brief.", "tools": [
    ...     {"name": "t", "input_schema": {"type": "object"}}],
    ...     "messages": [{"role": "user", "content": "Hi"}]})
    >>> [m["role"] for m in chat["messages"]], chat["tools"][0]["function"]["name"]
    (['system', 'user'], 't')
    """
    messages: list[dict[str, Any]] = []
    system = _text(blocks(body.get("system")))
    if system:
        messages.append({"role": "system", "content": system})
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            texts: list[str] = []
            calls: list[dict[str, Any]] = []
            for block in blocks(message.get("content")):
                if block.get("type") == "text":
                    texts.append(str(block.get("text") or ""))
                elif block.get("type") == "tool_use":
                    arguments = json.dumps(block.get("input") or {})
                    function = {"name": str(block.get("name")), "arguments": arguments}
                    calls.append({"id": block.get("id"), "type": "function", "function": function})
            out: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
            if calls:
                out["tool_calls"] = calls
            messages.append(out)
            continue
        # Chat Completions wants tool results straight after the assistant's calls, so they
        # come first; any text or document of the same Anthropic user message follows them.
        tools, parts = _user_parts(message.get("content"))
        messages.extend(tools)
        if parts:
            messages.append({"role": "user", "content": parts})
    offered = [
        {
            "type": "function",
            "function": {
                "name": str(t.get("name", "")),
                "description": str(t.get("description", "")),
                "parameters": t.get("input_schema") or {},
            },
        }
        for t in body.get("tools") or []
        if isinstance(t, dict)
    ]
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    if offered:
        chat["tools"] = offered
    return chat


def _real_looking(prefix: str, salt: str) -> str:
    digest = int.from_bytes(hashlib.sha256(f"pairbench:{salt}".encode()).digest(), "big")
    chars = []
    for _ in range(22):
        digest, rest = divmod(digest, 62)
        chars.append(_BASE62[rest])
    return prefix + "01" + "".join(chars)


def tool_use_id(n: int, i: int) -> str:
    """A deterministic id shaped like the real ones (``toolu_01`` and 22 base-62 characters)."""
    return _real_looking("toolu_", f"{n}:{i}")


def message_id(n: int) -> str:
    """The deterministic ``msg_01...`` id of the reply to request ``n``."""
    return _real_looking("msg_", str(n))


def request_id(hit: int) -> str:
    """The deterministic ``req_01...`` id (the ``request-id`` header) of the server's hit."""
    return _real_looking("req_", f"hit{hit}")


def from_schema(schema: Mapping[str, Any], text: str) -> Any:
    """A value of a JSON schema, every string in it ``text`` (a structured-output reply).

    >>> from_schema({"type": "object", "properties": {"title": {"type": "string"}}}, "Hi")
    {'title': 'Hi'}
    """
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {k: from_schema(v, text) for k, v in props.items() if isinstance(v, dict)}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    if schema.get("enum"):
        return schema["enum"][0]
    return text


def reply_blocks(n: int, content: str | None, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``decide``'s (content, tool_calls) as Messages API content blocks for request ``n``.

    >>> reply_blocks(1, "Done.", [])
    [{'type': 'text', 'text': 'Done.'}]
    """
    out: list[dict[str, Any]] = []
    if content:
        out.append({"type": "text", "text": content})
    for i, call in enumerate(calls):
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = {}
        out.append(
            {
                "type": "tool_use",
                "id": tool_use_id(n, i),
                "name": str(function.get("name")),
                "input": arguments if isinstance(arguments, dict) else {},
            }
        )
    return out or [{"type": "text", "text": ""}]
