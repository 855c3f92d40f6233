"""The double's replies to the ``openai`` attribution engine: a short tool loop, a report, checks.

Recognised by the marker on the first line of the engine's system prompts (``agent``,
``report``, ``ending check``); everything else is read from the request, so a broken
browser or a lost tool result gives a different answer, never the right one by luck.

- **Agent** (browser tools offered): ``goto`` the start URL of the user message, then
  ``snapshot``, then ``click`` the first ref whose accessible name shares a word with the
  goal, then ``snapshot`` again, then a plain-text answer. No matching ref: it answers
  after the first snapshot.
- **Report** (``json_schema`` ``attribution_report``): per session, a finding
  (``product_behavior``) when the final snapshot shows error text or a step's outcome a 5xx
  status, else a set-aside item (``insufficient_evidence``); one takeaway per user made of
  the page's own words.
- **Ending check**: ``supported`` exactly when every word of the sentence (3+ characters,
  a few narration words aside) occurs in what the browser showed.

This proves the engine's plumbing (calls, tool results reaching the model, schemas, usage),
not any judgment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.testing._messages import calls_and_results as _calls_and_results
from pairbench.testing._messages import messages as _messages
from pairbench.testing._messages import text as _text
from pairbench.testing._messages import tool_names as _tool_names

AGENT_MARK = "(pairbench attribution engine, agent)"
REPORT_MARK = "(pairbench attribution engine, report)"
CHECK_MARK = "(pairbench attribution engine, ending check)"
NOTHING_FOUND = "I looked at the page and found nothing that matches my goal."

_START = re.compile(r"^Start URL: (?P<url>\S+)", re.M)
_GOAL = re.compile(r"^Your goal: (?P<goal>.*)$", re.M)
_REF = re.compile(r'^\s*- [\w-]+ "(?P<name>(?:[^"\\]|\\.)*)".*\[ref=(?P<ref>e\d+)\]', re.M)
_MARKS = re.compile(r"\s*\[(?:ref=e\d+|cursor=\w+|active|level=\d+)\]")
_ERROR = re.compile(r"\b(?:error|went wrong|failed|unavailable|could not)\b|\b5\d\d\b", re.I)
_STATUS_5XX = re.compile(r"\(status 5\d\d\)")
_WORD = re.compile(r"\w{3,}")
_STOP = frozenset({
    "the", "and", "you", "your", "for", "with", "want", "this", "that", "from", "are", "was",
    "were", "into", "have", "has", "then", "after", "page", "showed", "said", "clicked",
})  # fmt: skip


def _words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP}


def _call(name: str, args: dict[str, Any], n: int) -> list[dict[str, Any]]:
    call = {"name": name, "arguments": json.dumps(args)}
    return [{"id": f"call_{n}_{name}", "type": "function", "function": call}]


def _lines(snapshot: str) -> list[str]:
    """A snapshot's lines as text: marks and the leading dash removed."""
    out = []
    for line in snapshot.splitlines():
        plain = _MARKS.sub("", line).strip().removeprefix("- ").rstrip(":").strip()
        if plain and not plain.startswith("/url"):
            out.append(plain)
    return out


def _agent(
    prompt: str, messages: Sequence[Mapping[str, Any]], offered: list[str]
) -> tuple[str | None, list[dict[str, Any]]]:
    tools = {n.split("__")[-1]: n for n in offered}
    start, goal = _START.search(prompt), _GOAL.search(prompt)
    if start is None or not {"goto", "snapshot", "click"} <= set(tools):
        return "I cannot open a web browser from here.", []
    done = _calls_and_results(messages)
    n = len(messages)
    if not any(name == tools["goto"] for name, _, _ in done):
        return None, _call(tools["goto"], {"url": start["url"]}, n)
    snapshots = [r for name, _, r in done if name == tools["snapshot"] and r is not None]
    clicked = [(a, r) for name, a, r in done if name == tools["click"]]
    if not snapshots:
        return None, _call(tools["snapshot"], {}, n)
    if not clicked:
        wanted = _words(goal["goal"] if goal else "")
        for m in _REF.finditer(snapshots[-1]):
            if _words(m["name"]) & wanted:
                return None, _call(tools["click"], {"ref": m["ref"]}, n)
        return NOTHING_FOUND, []
    if len(snapshots) < 2:
        return None, _call(tools["snapshot"], {}, n)
    result = clicked[-1][1] or ""
    return f"I clicked and then looked again. {result.splitlines()[0] if result else ''}", []


def _report(prompt: str) -> str:
    sessions = _payload(prompt).get("sessions") or []
    report: dict[str, list[dict[str, Any]]] = {"findings": [], "set_aside": [], "takeaways": []}
    for session in sessions:
        user = str(session.get("user", ""))
        lines = _lines(str(session.get("final_snapshot") or ""))
        steps = session.get("steps") or []
        outcomes = [str(s.get("outcome", "")) for s in steps]
        error = next((line for line in lines if _ERROR.search(line)), None)
        if error is None:
            error = next((o for o in outcomes if _STATUS_5XX.search(o)), None)
        target = str(steps[-1].get("target", "")) if steps else ""
        if error is not None:
            report["findings"].append(
                {"headline": f"{target or 'The page'} showed an error", "what_happened":
                 f"After {target or 'opening the page'}, the page showed: {error}",
                 "why_it_matters": "The user could not reach their goal.",
                 "confidence_note": "Seen in one session.",
                 "expectation": "The action completes without an error.",
                 "evidence_text": error, "users": [user], "claim_scope": "product_behavior"}
            )  # fmt: skip
            report["takeaways"].append({"user": user, "text": f"{target} showed {error}"})
            continue
        summary = "Nothing the user saw shows the product failing."
        report["set_aside"].append(
            {"summary": summary, "users": [user], "reason": "insufficient_evidence"}
        )
        if lines:
            report["takeaways"].append({"user": user, "text": f"The page showed {lines[-1]}"})
    return json.dumps(report)


def _check(prompt: str) -> str:
    payload = _payload(prompt)
    sentence = str(payload.get("sentence", ""))
    shown = _words(" ".join(str(s) for s in payload.get("browser_showed") or []))
    missing = sorted(_words(sentence) - shown)
    supported = bool(_words(sentence)) and not missing
    reason = "every word is in the record" if supported else f"not shown: {', '.join(missing)}"
    return json.dumps({"supported": supported, "reason": reason})


def _payload(prompt: str) -> dict[str, Any]:
    _, _, rest = prompt.partition("\n")
    try:
        value = json.loads(rest)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def attribution(
    messages: Sequence[Mapping[str, Any]], offered: list[str]
) -> tuple[str | None, list[dict[str, Any]]] | None:
    """The reply to one of the engine's calls, or None when the request is not one."""
    system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    prompt = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if AGENT_MARK in system:
        return _agent(prompt, messages, offered)
    if REPORT_MARK in system:
        return _report(prompt), []
    if CHECK_MARK in system:
        return _check(prompt), []
    return None


def attribution_reply(body: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]]] | None:
    """``Study.double``: the engine's reply, or ``None`` for another study's request."""
    return attribution(_messages(body), _tool_names(body))
