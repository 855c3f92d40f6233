"""What a scripted model sees of a conversation, and how it answers.

A script is a pure function of the conversation: the tool calls made so far with their
results (``Turn.seen``) and seeded draws (``Turn.draw``) keyed by the request's seed and a
hash of the conversation. Two runs with the same seed therefore get the same replies until
their tool results differ (the revisions diverge), and different seeds take other branches.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Call:
    """One tool call to send: its name and the raw ``arguments`` text."""

    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """The assistant message: text, tool calls, or both."""

    content: str | None
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Seen:
    """A tool call of an earlier turn and the result the runtime sent back."""

    name: str
    args: dict[str, Any]
    result: str

    @property
    def failed(self) -> bool:
        return self.result.startswith("error")

    @property
    def verifier_passed(self) -> bool:
        return self.name == "run_verifier" and self.result.startswith("verifier exit code 0")


def lenient_args(raw: str) -> dict[str, Any]:
    """The object in ``raw`` as a model means it (decoded twice when it was encoded twice)."""
    try:
        value = json.loads(raw) if raw.strip() else {}
        if isinstance(value, str):
            value = json.loads(value)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Turn:
    """The conversation so far, from the model's side."""

    scenario: str
    prompt: str
    seen: tuple[Seen, ...]
    seed: int
    digest: str
    """SHA-256 of the conversation's canonical JSON (roles, texts, calls, call ids)."""

    def draw(self, label: str) -> float:
        """A number in [0, 1) fixed by (seed, conversation, label)."""
        key = hashlib.sha256(f"{self.seed}|{self.digest}|{label}".encode()).digest()
        return int.from_bytes(key[:8], "big") / 2**64

    @property
    def last(self) -> Seen | None:
        return self.seen[-1] if self.seen else None

    def named(self, name: str) -> list[Seen]:
        """Earlier calls of one tool, oldest first."""
        return [s for s in self.seen if s.name == name]

    def wrote(self, path: str) -> bool:
        """Whether a write to ``path`` succeeded."""
        return any(s.args.get("path") == path and not s.failed for s in self.named("write_file"))

    def read_ok(self, path: str) -> Seen | None:
        """The latest successful read of ``path``."""
        found = [s for s in self.named("read_file") if s.args.get("path") == path]
        ok = [s for s in found if not s.failed]
        return ok[-1] if ok else None

    def url(self) -> str:
        """The first loopback URL of the prompt (``http://127.0.0.1:PORT``)."""
        match = re.search(r"http://127\.0\.0\.1:\d+", self.prompt)
        return match.group(0) if match else "http://127.0.0.1:9"


Script = Callable[[Turn], Reply]


def call(name: str, **args: Any) -> Call:
    """A tool call with its arguments encoded once (as they should be)."""
    return Call(name, json.dumps(args, ensure_ascii=False))


def double(name: str, **args: Any) -> Call:
    """A tool call with its arguments encoded twice: a JSON string holding the JSON."""
    return Call(name, json.dumps(json.dumps(args, ensure_ascii=False)))


def act(*calls: Call, say: str | None = None) -> Reply:
    """Reply with tool calls."""
    return Reply(say, tuple(calls))


def finish(status: str, summary: str) -> Reply:
    """Reply with the ``finish`` call."""
    return act(call("finish", status=status, summary=summary))
