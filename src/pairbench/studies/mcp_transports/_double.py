"""The study's agent for the test doubles (``Study.double``): the tracker agent.

The first user message is matched against the study's prompts (issue title, open-label
count, file line, open issue, add label); if a function whose name ends in ``__<tool>`` (or
is ``<tool>``) is offered, the reply calls it with arguments parsed from the prompt, and once
the request carries that call's ``tool`` message the answer is read from the JSON in it.
With no such tool offered it answers ``NO_TRACKER``. So a broken tool path cannot pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pairbench.testing._messages import prompt as _prompt
from pairbench.testing._messages import text as _text
from pairbench.testing._messages import tool_names as _tool_names

NO_TRACKER = "I cannot reach the tracker from here."

# (prompt pattern with the tool's arguments as named groups, tool, fixed arguments, answer
# template filled from the tool's JSON result). ``number`` and ``line`` are sent as ints.
_RULES: list[tuple[re.Pattern[str], str, dict[str, Any], str]] = [
    (re.compile(r"title of issue #(?P<number>\d+) in the repository (?P<repo>\S+?)\?"),
     "get_issue", {}, "{title}"),
    (re.compile(r'many open issues labeled "(?P<label>.+?)" does the repository (?P<repo>\S+) '),
     "list_issues", {"state": "open"}, "{count}"),
    (re.compile(r"line (?P<line>\d+) of the file (?P<path>\S+) in the repository (?P<repo>\S+?)\?"),
     "read_file", {}, "{line_text}"),
    (re.compile(r"repository (?P<repo>\S+?)\.\s+Title: (?P<title>.*)\nBody: (?P<body>.*)"),
     "create_issue", {}, "Opened issue #{number}."),
    (re.compile(r'"(?P<label>.+?)" to issue #(?P<number>\d+) in the repository (?P<repo>\S+?)\.'),
     "add_label", {}, "done"),
]  # fmt: skip


def tracker_reply(body: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]]] | None:
    """The tracker agent's reply, or ``None`` when the prompt is not one of the study's."""
    messages = list(body.get("messages") or [])
    prompt = _prompt(body)
    offered = _tool_names(body)
    for pattern, tool, fixed, answer in _RULES:
        match = pattern.search(prompt)
        if match is None:
            continue
        name = next((n for n in offered if n.split("__")[-1] == tool), None)
        if name is None:
            return NO_TRACKER, []
        called = {
            str(c.get("id")): str(c.get("function", {}).get("name"))
            for m in messages
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        }
        results = [
            _text(m.get("content"))
            for m in messages
            if m.get("role") == "tool" and called.get(str(m.get("tool_call_id"))) == name
        ]
        if not results:
            args = {
                k: int(v) if k in ("number", "line") else v.strip()
                for k, v in match.groupdict().items()
            }
            call = {"name": name, "arguments": json.dumps({**args, **fixed})}
            return None, [{"id": f"call_{len(messages)}", "type": "function", "function": call}]
        try:
            return answer.format_map(json.loads(results[-1])), []
        except (ValueError, KeyError, TypeError):
            return f"The tracker returned an error: {results[-1][:200]}", []
    return None
