"""Claude Code reading the webmcp-vs-pdf PDF with its built-in ``Read`` tool.

For the meta-analysis prompt (``_META_PROMPT``) with no page tools (``fit_random_effects`` /
``egger_test``) but a ``Read`` tool offered, ``decide`` here first calls ``Read``
``{"file_path": <absolute path>}`` for the ``.pdf`` the prompt names: a relative name is
joined to the primary working directory Claude Code's system prompt states ("Primary
working directory: /abs/path"). Once the conversation holds that call's result, the chat
double's ``decide`` answers from it: Claude Code 2.1.197 sends a PDF's Read as a
``tool_result`` with the text "PDF file read: <path> (16.6KB)" followed, in the same user
message, by a base64 ``document`` block (a document nested in the ``tool_result`` content is
lifted out by ``blocks``); ``to_chat`` makes either a file part.
It reads the Chat Completions shape ``to_chat`` makes, so it is a drop-in for ``decide``.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from typing import Any

from pairbench.testing._chat_double import decide as chat_decide
from pairbench.testing._chat_double_meta import _META_PROMPT, _text

READ = "Read"
_PDF_NAME = re.compile(r"[\w./-]+\.pdf\b", re.I)
_CWD = re.compile(r"(?:Primary working directory|Working directory):\s*(/[^\n]*?)\s*$", re.M)


def working_dir(system: str) -> str | None:
    """The working directory a Claude Code system prompt states.

    >>> working_dir("# Environment\\n - Primary working directory: /tmp/x/cwd\\n - Platform")
    '/tmp/x/cwd'
    """
    found = _CWD.search(system)
    return None if found is None else found.group(1)


def _read_call(chat: Mapping[str, Any]) -> dict[str, Any] | None:
    messages = [m for m in chat.get("messages") or [] if isinstance(m, dict)]
    prompt = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if _META_PROMPT.search(prompt) is None:
        return None
    offered = [str(t.get("function", {}).get("name", "")) for t in chat.get("tools") or []]
    if READ not in offered or any(
        n.endswith(("fit_random_effects", "egger_test")) for n in offered
    ):
        return None
    reads = {
        str(c.get("id"))
        for m in messages
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
        if (c.get("function") or {}).get("name") == READ
    }
    if any(m.get("role") == "tool" and str(m.get("tool_call_id")) in reads for m in messages):
        return None  # the PDF was read: decide answers from it
    pdf = next((m.group(0) for m in [_PDF_NAME.search(prompt)] if m is not None), None)
    if pdf is None:
        return None
    if not pdf.startswith("/"):
        system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
        cwd = working_dir(system)
        if cwd is None:
            return None
        pdf = posixpath.normpath(posixpath.join(cwd, pdf))
    call = {"name": READ, "arguments": json.dumps({"file_path": pdf})}
    return {"id": f"call_{len(messages)}", "type": "function", "function": call}


def decide(chat: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """The chat double's ``decide``, with Claude Code's ``Read`` of the PDF first."""
    call = _read_call(chat)
    if call is not None:
        return None, [call]
    return chat_decide(chat)
