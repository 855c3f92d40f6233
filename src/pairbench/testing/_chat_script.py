"""How a chat double misbehaves: the script it is started with (everything else it decides
from the request). Read by the double and by its llama-server routes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field, model_validator

from pairbench._model import Frozen
from pairbench.testing._messages import first_text, tool_names


class ScriptedCall(Frozen):
    """A tool call a scripted reply makes: the offered function whose name is ``name`` or
    ends in ``__<name>`` (an MCP server's tools), with these arguments."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptedReply(Frozen):
    """One step of a scenario script: when the task prompt (the first user message) matches
    ``match`` and the request carries ``after_tool_results`` tool results, reply with
    ``content`` or ``tool_calls``. The first matching step wins; a prompt no step matches is
    left to the studies' replies.

    **Usage** (a JSON script file, ``--script``)::

        {"llama_cpp": true, "timings": true, "replies": [
          {"match": "AR-9", "tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}]},
          {"match": "AR-9", "after_tool_results": 1, "content": "done: a is read"}]}
    """

    match: str
    """A regular expression searched in the task prompt."""
    after_tool_results: int = Field(default=0, ge=0)
    """How many ``tool`` messages the request carries: the step of the conversation."""
    content: str | None = None
    tool_calls: list[ScriptedCall] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_reply(self) -> ScriptedReply:
        if (self.content is None) == (not self.tool_calls):
            raise ValueError("give content or tool_calls (one of the two)")
        try:
            re.compile(self.match)
        except re.error as exc:
            raise ValueError(f"match {self.match!r} is not a regular expression: {exc}") from exc
        return self


class ChatScript(Frozen):
    """How the double misbehaves, and the scenario steps it answers from a script
    (everything else is decided from the request)."""

    replies: list[ScriptedReply] = Field(default_factory=list)
    """The user's own scenarios, step by step (``ScriptedReply``), asked before any study."""

    rate_limit_on: list[int] = Field(default_factory=list)
    quota_on: list[int] = Field(default_factory=list)
    server_error_on: list[int] = Field(default_factory=list)
    unavailable_on: list[int] = Field(default_factory=list)
    """Requests answered 503 ``Loading model``, as llama-server does while it starts."""
    omit_usage_on: list[int] = Field(default_factory=list)
    fail_auth: bool = False
    api_key: str | None = None
    model: str | None = None
    """The model named in replies (default: the request's ``model``)."""
    system_fingerprint: str = "fp_pairbench_double"
    timings: bool = False
    """Add llama.cpp-style ``timings`` to replies (on the last chunk when streaming)."""
    delay_s: float = Field(default=0.0, ge=0)
    reject_file_parts: bool = False
    """Answer a request carrying a file content part with 400 (an endpoint without files)."""
    chunk_delay_s: float = Field(default=0.0, ge=0)
    """Pause between streamed chunks (a slow model: the first chunk leaves before the rest)."""
    llama_cpp: bool = False
    """Also serve llama-server's ``/health``, ``/props``, ``/slots`` and ``/metrics``."""
    slots: int = Field(default=1, ge=1)
    """``total_slots`` in ``/props`` (with ``llama_cpp``)."""
    model_path: str | None = None
    """``model_path`` in ``/props`` (with ``llama_cpp``): a GGUF's path, or none."""


def scripted_reply(
    script: ChatScript, body: Mapping[str, Any]
) -> tuple[str | None, list[dict[str, Any]]] | None:
    """The script's reply to a request, or ``None`` when no step matches it."""
    if not script.replies:
        return None
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    prompt = first_text(body, "user")
    results = sum(1 for m in messages if m.get("role") == "tool")
    offered = tool_names(body)
    for step in script.replies:
        if step.after_tool_results != results or not re.search(step.match, prompt):
            continue
        if step.content is not None:
            return step.content, []
        calls = []
        for i, call in enumerate(step.tool_calls):
            name = next((n for n in offered if n == call.name or n.endswith(f"__{call.name}")),
                        call.name)  # fmt: skip
            function = {"name": name, "arguments": json.dumps(call.arguments)}
            calls.append({"id": f"call_{len(messages)}_{i}", "type": "function",
                          "function": function})  # fmt: skip
        return None, calls
    return None
