"""The ``claude-code`` adapter: Claude Code's CLI in ``-p`` mode, parsed from stream-json."""

from pairbench.agents.claude_code._agent import ClaudeCodeAgent, ClaudeCodeSettings
from pairbench.agents.claude_code._stream import ClaudeStreamParser

__all__ = ["ClaudeCodeAgent", "ClaudeCodeSettings", "ClaudeStreamParser"]
