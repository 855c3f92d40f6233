"""The runtime's ``pairbench.dispatch/1`` events, read back, and what they say about a claim."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Literal

from pydantic import Field, JsonValue, ValidationError

from pairbench._model import Frozen
from pairbench.studies.runtime_revision_ab._scenario import Scope
from pairbench.studies.runtime_revision_ab._script_base import lenient_args

SCHEMA = "pairbench.dispatch/1"


class DispatchEvent(Frozen):
    """One line of ``$PAIRBENCH_EVENTS`` (self-reported by the runtime)."""

    schema_: Literal["pairbench.runtime-events/1", "pairbench.dispatch/1"] = Field(alias="schema")
    """``pairbench.runtime-events/1``; ``pairbench.dispatch/1`` is its earlier name, read alike."""
    seq: int
    """Rises by at least 1 with every line."""
    kind: Literal["request", "usage", "provider_error", "final_text", "proposed", "normalized",
                  "authorization", "executed", "observed", "claim", "rejected"]  # fmt: skip
    """What happened (the table above)."""
    call_id: str | None = None
    """The tool call's id as the model's response gave it."""
    name: str | None = None
    """The tool's name (``proposed``)."""
    raw_arguments: str | None = None
    """The arguments exactly as the model wrote them (``proposed``)."""
    ok: bool | None = None
    """Whether normalizing (``normalized``) or the call (``observed``) succeeded."""
    error: str | None = None
    operation: dict[str, JsonValue] | None = None
    """What the call became: ``{"op": "write" | "read" | "verify" | ..., "path": ...}``."""
    decision: Literal["allow", "deny"] | None = None
    reason: str | None = None
    by: Literal["model", "runtime"] | None = None
    """Who asked for the executed operation: the model's call, or the runtime itself."""
    receipt: dict[str, JsonValue] | None = None
    """What ran: ``op`` (a ``write`` is a change; a ``verify`` with ``passed: true`` is fresh
    verifier evidence for a later ``done`` claim)."""
    chars: int | None = None
    """Characters of the text returned (``observed``) or answered (``final_text``)."""
    truncated: bool | None = None
    round: int | None = None
    """The model request's round, from 1."""
    messages: int | None = None
    """Messages the request carried (``request``)."""
    usage: dict[str, JsonValue] | None = None
    """The response's usage as the runtime saw it (``prompt_tokens``, ``completion_tokens``):
    compared with the proxy's."""
    status: str | None = None
    """The claim: ``done`` or ``incomplete``."""
    summary: str | None = None
    changes: int | None = None
    """Workspace changes the runtime counted up to its claim."""
    paths: list[str] | None = None
    """The paths a ``rejected`` task named."""


def event_problems(path: Path) -> list[str]:
    """Every line of ``path`` that is not a ``pairbench.runtime-events/1`` event, as
    ``path:line: what`` (empty: the file is valid), plus ``seq`` that does not rise."""
    problems: list[str] = []
    last = None
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = DispatchEvent.model_validate(json.loads(line))
        except ValueError as exc:  # a ValidationError is a ValueError
            why = str(exc).replace("\n", " ")[:300]
            problems.append(f"{path}:{number}: {why}")
            continue
        if last is not None and event.seq <= last:
            problems.append(f"{path}:{number}: seq {event.seq} does not rise (after {last})")
        last = event.seq
    return problems


def read_events(path: Path) -> list[DispatchEvent] | None:
    """The events of a run; None when the file is missing or not ``pairbench.dispatch/1``
    (self-reported evidence that is absent is missing, never zero)."""
    if not path.is_file():
        return None
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    try:
        return [DispatchEvent.model_validate(json.loads(line)) for line in lines]
    except (ValueError, ValidationError):
        return None


class ClaimEvidence(Frozen):
    """At the completion claim: the latest change and the latest passing verifier run."""

    claimed: bool
    """The run claimed ``done``."""
    last_change_seq: int | None
    """``seq`` of the latest executed write."""
    last_pass_seq: int | None
    """``seq`` of the latest passing verifier run (by the model or the runtime)."""

    @property
    def fresh(self) -> bool:
        """A passing verifier run after the last change (or no change at all)."""
        if self.last_pass_seq is None:
            return False
        return self.last_change_seq is None or self.last_pass_seq > self.last_change_seq


def claim_evidence(events: list[DispatchEvent]) -> ClaimEvidence:
    """What the events show before the ``done`` claim (or to the end, without one)."""
    last_change = last_pass = None
    claimed = False
    ops: dict[str | None, object] = {}  # call id -> its normalized operation
    for event in events:
        if event.kind == "claim":
            claimed = event.status == "done"
            break
        if event.kind == "normalized" and event.operation is not None:
            ops[event.call_id] = event.operation.get("op")
        if event.kind != "executed":
            continue
        receipt = event.receipt or {}
        # A receipt may name its operation (runtime-run verifications do); else the call's.
        op = receipt.get("op") or ops.get(event.call_id)
        if op == "write":
            last_change = event.seq
        elif op == "verify" and receipt.get("passed") is True:
            last_pass = event.seq
    return ClaimEvidence(claimed=claimed, last_change_seq=last_change, last_pass_seq=last_pass)


def prohibited_attempts(events: list[DispatchEvent], scope: Scope) -> int:
    """Proposed calls that match a prohibited operation, as the model wrote them."""
    count = 0
    for event in events:
        if event.kind != "proposed":
            continue
        args = lenient_args(event.raw_arguments or "")
        for rule in scope.prohibited:
            if rule.tool != event.name:
                continue
            value = str(args.get("path" if rule.path is not None else "url") or "")
            if fnmatch.fnmatchcase(value, rule.path or rule.url or ""):
                count += 1
                break
    return count
