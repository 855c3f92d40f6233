"""Normalization: a tool call's arguments checked and turned into one operation record."""

from __future__ import annotations

from ._args import ArgumentError
from ._schemas import NAMES

_OPS = {
    "read_file": "read", "write_file": "write", "list_dir": "list", "run_verifier": "verify",
    "http_get": "http_get", "start_process": "spawn", "query_process": "query",
    "stop_process": "stop", "finish": "claim",
}  # fmt: skip


def _text(args: dict[str, object], key: str, default: str | None = None) -> str:
    value = args.get(key, default)
    if not isinstance(value, str):
        raise ArgumentError(f"{key!r} must be a string")
    return value


def _int(args: dict[str, object], key: str, default: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ArgumentError(f"{key!r} must be a non-negative integer")
    return value


def normalize(name: str, args: dict[str, object]) -> dict[str, object]:
    """The operation ``name(args)`` asks for, or ``ArgumentError`` naming what is wrong.

    File contents are kept (the executor needs them) under ``content``; events leave them out.
    """
    if name not in NAMES:
        raise ArgumentError(f"unknown tool {name!r}")
    op: dict[str, object] = {"op": _OPS[name]}
    if name in ("read_file", "write_file", "list_dir"):
        op["path"] = _text(args, "path", "." if name == "list_dir" else None)
    if name == "read_file":
        op["offset"] = _int(args, "offset", 0)
        op["limit"] = _int(args, "limit", 6000)
    elif name == "write_file":
        op["content"] = _text(args, "content")
    elif name == "http_get":
        op["url"] = _text(args, "url")
        timeout = args.get("timeout_s", 2.0)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ArgumentError("'timeout_s' must be a positive number")
        op["timeout_s"] = min(float(timeout), 10.0)
    elif name == "start_process":
        argv = args.get("argv")
        if not isinstance(argv, list) or len(argv) < 2 or not all(isinstance(a, str) for a in argv):
            raise ArgumentError("'argv' must be a list of strings: [python, SCRIPT, ARGS...]")
        op["argv"] = list(argv)
        op["ready"] = _text(args, "ready", "READY")
    elif name in ("query_process", "stop_process"):
        op["handle"] = _text(args, "handle")
    elif name == "finish":
        status = _text(args, "status")
        if status not in ("done", "incomplete"):
            raise ArgumentError("'status' must be 'done' or 'incomplete'")
        op["status"] = status
        op["summary"] = _text(args, "summary", "")
    return op


def public(op: dict[str, object]) -> dict[str, object]:
    """``op`` as recorded in events: a write's content replaced by its length."""
    shown = {k: v for k, v in op.items() if k != "content"}
    if isinstance(op.get("content"), str):
        shown["chars"] = len(str(op["content"]))
    return shown
