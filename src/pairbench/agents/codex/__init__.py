"""The ``codex`` adapter: ``codex exec --json``, parsed from its JSONL events."""

from pairbench.agents.codex._agent import CodexAgent, CodexSettings
from pairbench.agents.codex._events import CodexEventParser

__all__ = ["CodexAgent", "CodexEventParser", "CodexSettings"]
