"""The ``openai`` adapter: a tool loop over any Chat Completions endpoint."""

from pairbench.agents.openai._agent import OpenAIAgent
from pairbench.agents.openai._wire import OpenAISettings

__all__ = ["OpenAIAgent", "OpenAISettings"]
