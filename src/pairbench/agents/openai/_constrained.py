"""``tool_calling: constrained``: tool calls from a model that has no native tool calling.

The arm's tools are described in a system message and offered as one JSON-schema-constrained
reply (``response_format``): ``{"tool": <name>, "arguments": {...}}`` to call one, or
``{"answer": "..."}`` to answer. The server's grammar makes every reply well-formed JSON
naming an offered tool with arguments of its schema (whether they are *right* is the
model's); the agent turns it into the same tool call a native reply would carry, so the
loop, the transcript, the surface and the fixture's audit see no difference.

Seen here with Gemma 3 270M on llama.cpp: ``tools`` with ``tool_choice: required`` gave no
call at all, while this constraint gave a parseable call in 7 of 8 seeds (the eighth ran
into whitespace until ``max_tokens``: such a reply is kept as the final answer, unparsed).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pairbench.agents.openai._wire import Reply

PROMPT = (
    "You can use tools. Reply with exactly one JSON object and nothing else: "
    '{{"tool": "<tool name>", "arguments": {{...}}}} to call a tool (its result comes back '
    'in the next message), or {{"answer": "<your final answer>"}} when you are done.\n\n'
    "Tools:\n{tools}"
)


def prompt_text(functions: list[dict[str, Any]]) -> str:
    """The system message describing the tools, one line each with its argument schema."""
    lines = [
        f"- {f['function']['name']}: {f['function']['description'] or '(no description)'} "
        f"Arguments: {json.dumps(f['function']['parameters'], sort_keys=True)}"
        for f in functions
    ]
    return PROMPT.format(tools="\n".join(lines) or "(none)")


def prompt_sha256() -> str:
    """The template's hash: recorded so a changed prompt shows as a changed configuration."""
    return hashlib.sha256(PROMPT.encode("utf-8")).hexdigest()


def response_format(functions: list[dict[str, Any]]) -> dict[str, Any]:
    """The reply's JSON schema: one branch per tool (its name and its argument schema) and
    one for the final answer."""
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": [f["function"]["name"]]},
                "arguments": f["function"]["parameters"],
            },
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for f in functions
    ]
    branches.append(
        {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
            "additionalProperties": False,
        }
    )
    schema = {"anyOf": branches}
    return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}


def parse(reply: Reply, turn: int) -> tuple[Reply, str | None]:
    """The reply as a native one: its JSON call as ``tool_calls``, or its answer as the
    content; with the reason when the content could not be read (kept as the answer)."""
    text = reply.content or ""
    try:
        data = json.loads(text)
    except ValueError:
        return reply, f"not JSON (finish_reason {reply.finish_reason})"
    if isinstance(data, dict) and isinstance(data.get("tool"), str):
        arguments = data.get("arguments", {})
        call = {"id": f"call_{turn}", "name": data["tool"], "arguments": json.dumps(arguments)}
        reply.tool_calls = [call]
        reply.content = None
        return reply, None
    if isinstance(data, dict) and isinstance(data.get("answer"), str):
        reply.content = data["answer"]
        return reply, None
    return reply, "JSON that is neither a tool call nor an answer"
