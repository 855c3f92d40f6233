"""One tool call, step by step: proposed, normalized, authorized, executed, observed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from . import _files, _net
from ._args import ArgumentError, parse_arguments
from ._claims import settle
from ._events import EventLog
from ._files import ToolFailed
from ._operations import normalize, public
from ._paths import PathDenied, PathPolicy
from ._procs import PROGRAMS, Processes
from ._text import truncate
from ._verify import Progress, VerifierRun, run_verifier


@dataclass(frozen=True)
class Dispatched:
    """What goes back to the model, and the claim when the call ended the task."""

    text: str
    claim: str | None = None


class Denied(Exception):
    """An operation the runtime refuses to execute; ``reason`` is a short stable word."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class Toolbox:
    """Executes tool calls for one run and records each step in the event log."""

    def __init__(
        self, policy: PathPolicy, verifier: list[str], env: dict[str, str], events: EventLog
    ) -> None:
        self.policy = policy
        self.verifier = verifier
        self.env = env
        self.events = events
        self.progress = Progress()
        self.processes = Processes(policy.workspace, env)

    def dispatch(self, call_id: str, name: str, raw: str) -> Dispatched:
        """Run one proposed call; errors and denials come back as text for the model."""
        self.events.emit("proposed", call_id=call_id, name=name, raw_arguments=raw)
        try:
            op = normalize(name, parse_arguments(raw))
        except ArgumentError as exc:
            self.events.emit("normalized", call_id=call_id, ok=False, error=str(exc))
            return self._observe(call_id, f"error: invalid arguments: {exc}", "invalid_arguments")
        self.events.emit("normalized", call_id=call_id, ok=True, operation=public(op))
        try:
            target = self._authorize(op)
        except (PathDenied, Denied) as exc:
            reason = str(exc.reason)
            self.events.emit("authorization", call_id=call_id, decision="deny", reason=reason)
            return self._observe(call_id, f"error: denied ({reason}): {exc}", "denial")
        self.events.emit("authorization", call_id=call_id, decision="allow", reason="policy")
        try:
            return self._execute(call_id, op, target)
        except ToolFailed as exc:
            return self._observe(call_id, f"error: {exc}", exc.kind)

    def _authorize(self, op: dict[str, object]) -> Path | None:
        kind = op["op"]
        if kind in ("read", "write", "list"):
            relative, target = self.policy.resolve(str(op["path"]))
            op["path"] = relative
            return target
        if kind == "http_get":
            reason = _net.loopback_url(str(op["url"]))
            if reason is not None:
                raise Denied(reason)
        if kind == "spawn":
            argv = _argv(op)
            if argv[0] not in PROGRAMS:
                raise Denied("program_not_allowed")
            relative, target = self.policy.resolve(argv[1])
            return target
        return None

    def _execute(self, call_id: str, op: dict[str, object], target: Path | None) -> Dispatched:
        kind, receipt = op["op"], dict(public(op))
        claim: str | None = None
        error: str | None = None
        more = False
        if kind == "read" and target is not None:
            text, more = _files.read_file(target, str(op["path"]), int(str(op["offset"])),
                                          int(str(op["limit"])))  # fmt: skip
            receipt["more"] = more
        elif kind == "write" and target is not None:
            receipt = _files.write_file(target, str(op["path"]), str(op["content"]))
            self.progress.changes += 1
            text = f"wrote {receipt['bytes']} bytes to {op['path']}"
        elif kind == "list" and target is not None:
            text = _files.list_dir(target, str(op["path"]))
        elif kind == "verify":
            run = self._verify()
            receipt.update(exit_code=run.exit_code, passed=run.passed)
            text = f"verifier exit code {run.exit_code}\n{run.output}"
            error = None if run.passed else "diagnostic"
        elif kind == "http_get":
            status, body = _net.http_get(str(op["url"]), float(str(op["timeout_s"])))
            receipt["status"] = status
            text = f"HTTP {status}\n{body}"
            error = None if status < 400 else "backend"
        elif kind == "spawn" and target is not None:
            argv = _argv(op)
            receipt = self.processes.start(target, argv[2:], str(op["ready"]), 5.0)
            text = json.dumps(receipt)
        elif kind == "query":
            receipt = self.processes.query(str(op["handle"]))
            text = json.dumps(receipt)
        elif kind == "stop":
            receipt = self.processes.stop(str(op["handle"]))
            text = json.dumps(receipt)
        else:
            settled = settle(str(op["status"]), self.progress, self._verify)
            if settled.run is not None:
                self.events.emit("executed", call_id=call_id, by="runtime",
                                 receipt={"op": "verify", "exit_code": settled.run.exit_code,
                                          "passed": settled.run.passed})  # fmt: skip
            receipt["accepted"] = settled.accepted
            claim = str(op["status"]) if settled.accepted else None
            text = settled.message
            error = None if settled.accepted else "diagnostic"
        self.events.emit("executed", call_id=call_id, by="model", receipt=receipt)
        result = self._observe(call_id, text, error, more)
        return Dispatched(result.text, claim)

    def _verify(self) -> VerifierRun:
        return run_verifier(self.verifier, self.policy.workspace, self.env, self.progress)

    def _observe(
        self, call_id: str, text: str, error: str | None, paged: bool = False
    ) -> Dispatched:
        shown, cut = truncate(text)
        self.events.emit("observed", call_id=call_id, ok=error is None, error=error,
                         chars=len(shown), truncated=cut or paged)  # fmt: skip
        return Dispatched(shown)


def _argv(op: dict[str, object]) -> list[str]:
    argv = op["argv"]
    return [str(a) for a in argv] if isinstance(argv, list) else []
