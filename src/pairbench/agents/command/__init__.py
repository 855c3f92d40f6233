"""The ``command`` adapter: any executable, with a scrubbed environment."""

from pairbench.agents.command._agent import CommandAgent, CommandSettings

__all__ = ["CommandAgent", "CommandSettings"]
