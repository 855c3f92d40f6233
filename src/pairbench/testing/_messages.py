"""Reading a Chat Completions request body, for the doubles and the studies' ``double`` hooks.

Every double hands a study's brain the Chat Completions shape (the Anthropic and Responses
doubles convert to it), so these few readers are all a brain needs to find its prompt, the
tools offered, the calls already made with their results, and attached files.

**Usage**::

    from pairbench.testing._messages import calls_and_results, prompt, text, tool_names
    if MY_PROMPT.search(prompt(body)) and "lookup" in tool_names(body): ...
"""

from __future__ import annotations

import base64
import binascii
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any


def text(content: Any) -> str:
    """A message's content as text: a string as it is, the ``text`` of content parts joined
    by spaces, ``None`` as ``""``.

    >>> text([{"type": "text", "text": "a"}, {"type": "file"}, {"type": "text", "text": "b"}])
    'a  b'
    """
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The request's ``messages`` (none: an empty list)."""
    return list(body.get("messages") or [])


def first_text(body: Mapping[str, Any], role: str) -> str:
    """The text of the first message with ``role`` (none: ``""``)."""
    return next((text(m.get("content")) for m in messages(body) if m.get("role") == role), "")


def prompt(body: Mapping[str, Any]) -> str:
    """The first user message's text: the task the brains match their prompts against."""
    return first_text(body, "user")


def tool_names(body: Mapping[str, Any]) -> list[str]:
    """The names of the functions the request offers, in order."""
    return [str(t.get("function", {}).get("name", "")) for t in body.get("tools") or []]


def calls_and_results(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any, str | None]]:
    """(function name, parsed arguments, tool result text or None) per call the request holds,
    in order; arguments that are not JSON are ``None``."""
    results = {
        str(m.get("tool_call_id")): text(m.get("content"))
        for m in messages
        if m.get("role") == "tool"
    }
    out: list[tuple[str, Any, str | None]] = []
    for m in messages:
        for c in m.get("tool_calls") or [] if m.get("role") == "assistant" else []:
            fn = c.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = None
            out.append((str(fn.get("name")), args, results.get(str(c.get("id")))))
    return out


def file_bytes(file: Mapping[str, Any]) -> bytes | None:
    """A file part's decoded ``file_data`` (a ``data:`` URL or bare base64); None if it is not
    base64."""
    data = str(file.get("file_data") or "")
    try:
        return base64.b64decode(data.partition("base64,")[2] or data, validate=True)
    except (binascii.Error, ValueError):
        return None


def file_text(file: Mapping[str, Any]) -> str:
    """A file part's text, as a model would read it: a PDF's through pypdf, anything else as
    UTF-8; ``""`` when it cannot be read."""
    data = file_bytes(file)
    if data is None:
        return ""
    if data.startswith(b"%PDF-"):
        from pypdf import PdfReader

        try:
            return "\n".join(p.extract_text() or "" for p in PdfReader(io.BytesIO(data)).pages)
        except Exception:  # a PDF the double cannot read is just unreadable input
            return ""
    return data.decode("utf-8", errors="replace")
