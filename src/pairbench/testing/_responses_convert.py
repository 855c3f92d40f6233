"""The Responses double's brain: a Responses request turned into the Chat Completions shape
``decide`` reads, and ``decide``'s reply turned back into Responses output items.

**Request → chat.** The task is the last user message that ``decide`` recognises (codex
sends an ``<environment_context>`` user message, and sometimes ``AGENTS.md`` text, before
the real prompt), else the last user message; it becomes the first (the only) user
message, so ``decide`` reads it as the prompt. ``function_call`` items become assistant
``tool_calls``, ``function_call_output`` items become ``tool`` messages (codex's
``Wall time: …`` / ``Output:`` header is stripped, so the JSON a tool returned is what the
brain parses), assistant ``message`` items become assistant messages; developer messages
are dropped. Offered tools are flattened: a ``function`` keeps its name, a function inside
a ``namespace`` tool (codex presents an MCP server ``tracker`` as the namespace
``mcp__tracker``) is named ``<namespace>__<name>``, so ``decide``'s ``__get_issue`` and
``fit_random_effects`` suffix matching finds it.

**Reply → items.** Text becomes a ``message`` with one ``output_text`` part; each tool call
becomes a ``function_call`` whose ``name``/``namespace`` are split back out (codex rejects a
flat ``mcp__tracker__get_issue`` with "unsupported call").

**Reading a PDF through the shell.** For a prompt that names a ``.pdf``, with codex's shell
tool offered (``exec_command`` ``{"cmd"}``; ``shell_command`` ``{"command": str}`` and
``shell`` ``{"command": [argv]}`` are understood too) and no MCP tool (an agent with tools
of its own uses them instead), the double first calls the shell with ``pdftotext <the .pdf>
-``, then answers from the text that comes back (blank lines and form feeds dropped, so a
table is one cell per line, as ``pypdf`` extracts it), fed to the studies' replies as the
request's text.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Any, NamedTuple

from pairbench.testing._chat_double import UNKNOWN, decide

SHELL_TOOLS = ("exec_command", "shell_command", "shell")
"""Codex's built-in shell tools, in order of preference (0.171.0 offers ``exec_command``)."""

_PDF_NAME = re.compile(r"[\w./-]+\.pdf\b", re.I)
# codex wraps every tool result: "Chunk ID: …\nWall time: …\nProcess exited with code N\n
# Original token count: N\nOutput:\n<text>" for the shell, "Wall time: …\nOutput:\n<text>"
# for MCP tools.
_CODEX_HEADER = re.compile(r"\A(?:[A-Z][\w ]*: [^\n]*\n){0,6}?Output:\n")


class Call(NamedTuple):
    """One tool call of a reply: its Responses name and namespace, and JSON arguments."""

    name: str
    namespace: str | None
    arguments: str


class Reply(NamedTuple):
    """What the double answers: text, or tool calls (never both)."""

    text: str | None
    calls: list[Call]


def content_text(content: Any) -> str:
    """The text of a message's content (a string, or ``input_text``/``output_text`` parts)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def output_text(output: Any) -> str:
    """A ``function_call_output``'s ``output`` as text (a string or a list of parts)."""
    return content_text(output)


def strip_codex_header(text: str) -> str:
    """A tool result without the ``Wall time:`` … ``Output:`` lines codex puts before it."""
    match = _CODEX_HEADER.match(text)
    return text[match.end() :] if match else text


def offered_tools(body: Mapping[str, Any]) -> dict[str, tuple[str | None, str]]:
    """Flat name → (namespace, name) for every function the request offers."""
    out: dict[str, tuple[str | None, str]] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "function" and tool.get("name"):
            out[str(tool["name"])] = (None, str(tool["name"]))
        elif tool.get("type") == "namespace" and tool.get("name"):
            space = str(tool["name"])
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and inner.get("type") == "function":
                    out[f"{space}__{inner.get('name')}"] = (space, str(inner.get("name")))
    return out


def _flat(item: Mapping[str, Any]) -> str:
    space = item.get("namespace")
    return f"{space}__{item.get('name')}" if space else str(item.get("name"))


def _user_texts(body: Mapping[str, Any]) -> list[str]:
    return [
        content_text(item.get("content"))
        for item in body.get("input") or []
        if isinstance(item, dict)
        and item.get("type", "message") == "message"
        and item.get("role") == "user"
    ]


def task_prompt(body: Mapping[str, Any]) -> str:
    """The user message that carries the task (see the module docstring)."""
    texts = _user_texts(body)
    if isinstance(body.get("input"), str):
        texts.append(str(body["input"]))
    for text in reversed(texts):
        if decide({"messages": [{"role": "user", "content": text}]})[0] != UNKNOWN:
            return text
    return texts[-1] if texts else ""


def to_chat(body: Mapping[str, Any], extra_text: str | None = None) -> dict[str, Any]:
    """The Chat Completions body ``decide`` reads for a Responses request."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": task_prompt(body)}]
    if extra_text is not None:
        messages.append({"role": "user", "content": extra_text})
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {"name": _flat(item), "arguments": str(item.get("arguments") or "")}
            tool_call = {"id": str(item.get("call_id")), "type": "function", "function": call}
            messages.append({"role": "assistant", "content": None, "tool_calls": [tool_call]})
        elif kind == "function_call_output":
            text = strip_codex_header(output_text(item.get("output")))
            messages.append(
                {"role": "tool", "tool_call_id": str(item.get("call_id")), "content": text}
            )
        elif kind == "message" and item.get("role") == "assistant":
            messages.append({"role": "assistant", "content": content_text(item.get("content"))})
    tools = [{"type": "function", "function": {"name": n}} for n in offered_tools(body)]
    return {"model": body.get("model"), "messages": messages, "tools": tools}


def _shell_call(name: str, command: str) -> str:
    if name == "exec_command":
        return json.dumps({"cmd": command})
    if name == "shell_command":
        return json.dumps({"command": command})
    return json.dumps({"command": ["bash", "-lc", command]})


def _shell_command(item: Mapping[str, Any]) -> str:
    try:
        args = json.loads(str(item.get("arguments") or "{}"))
    except ValueError:
        return ""
    if not isinstance(args, dict):
        return ""
    command = args.get("cmd", args.get("command", ""))
    return " ".join(map(str, command)) if isinstance(command, list) else str(command)


def pdf_text(text: str) -> str:
    """``pdftotext`` output as one cell per line: blank lines and form feeds dropped."""
    lines = (line.strip() for line in text.replace("\f", "\n").splitlines())
    return "\n".join(line for line in lines if line)


def _read_pdf_step(body: Mapping[str, Any], offered: Mapping[str, Any]) -> Reply | str | None:
    """For a prompt naming a PDF, with no MCP tools: the shell call that reads the PDF (a
    Reply), the text it returned (a str), or None when this path does not apply."""
    prompt = task_prompt(body)
    if any((space or "").startswith("mcp__") for space, _ in offered.values()):
        return None  # MCP tools offered (codex's mcp__<server> namespaces): it uses them
    shell = next((s for s in SHELL_TOOLS if s in offered and offered[s][0] is None), None)
    pdf = next((m.group(0) for t in [prompt, *_user_texts(body)] for m in [_PDF_NAME.search(t)]
                if m is not None), None)  # fmt: skip
    if shell is None or pdf is None:
        return None
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    calls = {
        str(i.get("call_id")): i
        for i in items
        if i.get("type") == "function_call"
        and _flat(i) == shell
        and "pdftotext" in _shell_command(i)
    }
    outputs = [
        output_text(i.get("output"))
        for i in items
        if i.get("type") == "function_call_output" and str(i.get("call_id")) in calls
    ]
    if outputs:
        return pdf_text(strip_codex_header(outputs[-1]))
    command = f"pdftotext {shlex.quote(pdf)} -"
    return Reply(None, [Call(shell, None, _shell_call(shell, command))])


def reply_to(body: Mapping[str, Any]) -> Reply:
    """The double's reply to a Responses request (see the module docstring)."""
    offered = offered_tools(body)
    step = _read_pdf_step(body, offered)
    if isinstance(step, Reply):
        return step
    text, tool_calls = decide(to_chat(body, extra_text=step))
    calls = []
    for call in tool_calls:
        flat = str(call["function"]["name"])
        space, name = offered.get(flat, (None, flat))
        calls.append(Call(name, space, str(call["function"]["arguments"])))
    return Reply(text, calls)
