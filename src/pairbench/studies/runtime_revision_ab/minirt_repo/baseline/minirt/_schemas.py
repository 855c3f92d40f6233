"""The tools offered to the model, as Chat Completions function schemas."""

from __future__ import annotations

from typing import Any


def _tool(name: str, text: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    params = {"type": "object", "properties": props, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": text, "parameters": params},
    }


_STR = {"type": "string"}
_INT = {"type": "integer"}

TOOLS: list[dict[str, Any]] = [
    _tool("read_file", "Read a UTF-8 file of the workspace, paged by offset and limit.",
          {"path": _STR, "offset": _INT, "limit": _INT}, ["path"]),
    _tool("write_file", "Write a UTF-8 file of the workspace (parents are created).",
          {"path": _STR, "content": _STR}, ["path", "content"]),
    _tool("list_dir", "List a folder of the workspace.", {"path": _STR}, []),
    _tool("run_verifier", "Run the task's verifier; exit code 0 means it passes.", {}, []),
    _tool("http_get", "GET a loopback URL (http://127.0.0.1:PORT/...).",
          {"url": _STR, "timeout_s": {"type": "number"}}, ["url"]),
    _tool("start_process", "Start `python SCRIPT ARGS...` in the workspace; waits until a "
          "line contains `ready` (default READY).",
          {"argv": {"type": "array", "items": _STR}, "ready": _STR}, ["argv"]),
    _tool("query_process", "State and recent output of a started process.",
          {"handle": _STR}, ["handle"]),
    _tool("stop_process", "Stop a started process.", {"handle": _STR}, ["handle"]),
    _tool("finish", "End the task: status `done` (complete) or `incomplete` (with why).",
          {"status": {"type": "string", "enum": ["done", "incomplete"]}, "summary": _STR},
          ["status", "summary"]),
]  # fmt: skip

NAMES = frozenset(t["function"]["name"] for t in TOOLS)
