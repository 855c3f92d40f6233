"""The scripted model: a Chat Completions request in, the next assistant message out."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pairbench.studies.runtime_revision_ab._script_base import (
    Reply,
    Script,
    Seen,
    Turn,
    lenient_args,
)
from pairbench.studies.runtime_revision_ab._scripts_files import (
    ar001_config,
    ar002_rename,
    ar003_missing,
    ar004_injection,
    ar005_long,
)
from pairbench.studies.runtime_revision_ab._scripts_world import (
    ar006_fetch,
    ar007_lure,
    ar008_names,
    ar009_repair,
    ar010_server,
)

SCRIPTS: dict[str, Script] = {
    "AR-001": ar001_config,
    "AR-002": ar002_rename,
    "AR-003": ar003_missing,
    "AR-004": ar004_injection,
    "AR-005": ar005_long,
    "AR-006": ar006_fetch,
    "AR-007": ar007_lure,
    "AR-008": ar008_names,
    "AR-009": ar009_repair,
    "AR-010": ar010_server,
}
"""Scenario id (named in the task prompt) to its script."""

_SCENARIO = re.compile(r"\bAR-\d{3}\b")
_DIGITS = re.compile(r"\d+")


def conversation_digest(messages: list[dict[str, Any]]) -> str:
    """SHA-256 of what the conversation says: roles, texts, tool calls and their ids (every
    number masked)."""
    kept = []
    for message in messages:
        calls = [
            [c.get("id"), (c.get("function") or {}).get("name"),
             (c.get("function") or {}).get("arguments")]
            for c in message.get("tool_calls") or []
        ]  # fmt: skip
        kept.append([message.get("role"), message.get("content"), calls,
                     message.get("tool_call_id")])  # fmt: skip
    text = json.dumps(kept, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # Numbers (loopback ports, pids, sizes) differ from run to run without the revision
    # mattering: masked, so such noise does not split a seeded pair.
    text = _DIGITS.sub("#", text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_turn(body: dict[str, Any]) -> Turn:
    """The conversation of a request body, as a script sees it."""
    messages: list[dict[str, Any]] = list(body.get("messages") or [])
    prompt = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
    found = _SCENARIO.search(prompt)
    results = {str(m.get("tool_call_id")): str(m.get("content") or "")
               for m in messages if m.get("role") == "tool"}  # fmt: skip
    seen: list[Seen] = []
    for message in messages:
        for c in message.get("tool_calls") or []:
            function = c.get("function") or {}
            seen.append(Seen(str(function.get("name")),
                             lenient_args(str(function.get("arguments") or "")),
                             results.get(str(c.get("id")), "")))  # fmt: skip
    seed = body.get("seed")
    return Turn(
        scenario=found.group(0) if found else "",
        prompt=prompt,
        seen=tuple(seen),
        # A request without a seed is answered as seed -1: reproducible, and visibly unseeded.
        seed=seed if isinstance(seed, int) else -1,
        digest=conversation_digest(messages),
    )


def reply_for(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message answering a Chat Completions request body.

    >>> reply_for({"messages": [{"role": "user", "content": "hello"}]})["content"]
    'No scenario id (AR-001 to AR-010) in the task: nothing to do.'
    """
    turn = read_turn(body)
    script = SCRIPTS.get(turn.scenario)
    if script is None:
        reply = Reply("No scenario id (AR-001 to AR-010) in the task: nothing to do.")
    else:
        reply = script(turn)
    assistant_turns = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.calls:
        message["tool_calls"] = [
            {"id": f"call_{assistant_turns + 1}_{k}", "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for k, c in enumerate(reply.calls)
        ]  # fmt: skip
    return message
