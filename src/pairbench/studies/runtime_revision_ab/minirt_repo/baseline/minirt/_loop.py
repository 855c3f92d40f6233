"""The tool loop: ask the model, dispatch its calls, until it claims or the rounds run out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._client import Completion, ProviderError, Settings, complete
from ._dispatch import Toolbox
from ._events import EventLog
from ._paths import PathPolicy, unsupported_names
from ._schemas import TOOLS

SYSTEM = (
    "You are minirt, a careful coding agent. You work only inside the workspace, through "
    "the tools; paths are relative to the workspace. Check your work with run_verifier. "
    "End with finish: status done when the task is complete and verified, else incomplete "
    "with the reason.\nWorkspace files:\n"
)


@dataclass(frozen=True)
class RunConfig:
    """Everything one run needs (see ``__main__`` for where each value comes from)."""

    workspace: Path
    prompt: str
    settings: Settings
    verifier: list[str]
    denied: list[Path]
    env: dict[str, str]
    events_path: str | None
    max_rounds: int = 16


@dataclass
class Outcome:
    """How the run ended: ``status`` is done, incomplete, rejected, exhausted or error."""

    status: str
    rounds: int = 0
    detail: str = ""
    usage: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0})


def run(config: RunConfig) -> Outcome:
    """Run the task to a claim, a rejection, an error or the round limit."""
    events = EventLog(config.events_path)
    policy = PathPolicy(config.workspace, config.denied)
    unusable = unsupported_names(policy.workspace)
    if unusable:
        # Refused before any request: the model never sees a task it could not address.
        events.emit("rejected", reason="unsupported_path", paths=unusable)
        return Outcome("rejected", detail=f"unsupported file names: {', '.join(unusable)}")
    listing = "\n".join(p.relative_to(policy.workspace).as_posix()
                        for p in sorted(policy.workspace.rglob("*")) if p.is_file())  # fmt: skip
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM + listing},
        {"role": "user", "content": config.prompt},
    ]
    tools = Toolbox(policy, config.verifier, config.env, events)
    outcome = Outcome("exhausted")
    try:
        outcome = _rounds(config, messages, tools, events, outcome)
    finally:
        for receipt in tools.processes.stop_all():
            events.emit(
                "executed", call_id=None, by="runtime", receipt={"op": "cleanup", **receipt}
            )
    return outcome


def _rounds(
    config: RunConfig,
    messages: list[dict[str, Any]],
    tools: Toolbox,
    events: EventLog,
    outcome: Outcome,
) -> Outcome:
    for round_no in range(1, config.max_rounds + 1):
        outcome.rounds = round_no
        events.emit("request", round=round_no, messages=len(messages))
        try:
            reply = complete(config.settings, messages, TOOLS)
        except ProviderError as exc:
            events.emit("provider_error", round=round_no, error=str(exc))
            outcome.status, outcome.detail = "error", str(exc)
            return outcome
        _count(outcome, reply, events, round_no)
        calls = [c for c in reply.message.get("tool_calls") or [] if isinstance(c, dict)]
        entry: dict[str, Any] = {"role": "assistant", "content": reply.message.get("content")}
        if calls:
            entry["tool_calls"] = calls
        messages.append(entry)
        if not calls:
            events.emit("final_text", round=round_no, chars=len(str(entry["content"] or "")))
            outcome.status, outcome.detail = "no_claim", "the model stopped without finish"
            return outcome
        claim = None
        for call in calls:
            function = call.get("function") or {}
            call_id = str(call.get("id") or f"call_{round_no}")
            result = tools.dispatch(call_id, str(function.get("name") or ""),
                                    str(function.get("arguments") or ""))  # fmt: skip
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result.text})
            claim = claim or result.claim
        if claim is not None:
            summary = _summary(calls)
            events.emit("claim", status=claim, summary=summary, changes=tools.progress.changes)
            outcome.status, outcome.detail = claim, summary
            return outcome
    return outcome


def _count(outcome: Outcome, reply: Completion, events: EventLog, round_no: int) -> None:
    usage = reply.usage or {}
    events.emit("usage", round=round_no, usage=reply.usage)
    for mine, theirs in (("prompt", "prompt_tokens"), ("completion", "completion_tokens")):
        value = usage.get(theirs)
        if isinstance(value, int):
            outcome.usage[mine] += value


def _summary(calls: list[dict[str, Any]]) -> str:
    for call in calls:
        function = call.get("function") or {}
        if function.get("name") == "finish":
            return str(function.get("arguments") or "")[:500]
    return ""
