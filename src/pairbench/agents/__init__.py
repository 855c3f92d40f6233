"""Agent adapters: the protocol, the scrubbed environment and the built-in adapters."""

from pairbench.agents._env import BASE_ALLOW, scrubbed_env
from pairbench.agents._protocol import (
    Agent,
    AgentContext,
    AgentOutput,
    InfraFailure,
    RunSignals,
    ToolSession,
)
from pairbench.agents._scripted import ScriptedAgent
from pairbench.agents._simulated import SimulatedAgent
from pairbench.agents.command import CommandAgent
from pairbench.store._transcript import Transcript

__all__ = [
    "BASE_ALLOW",
    "Agent",
    "AgentContext",
    "AgentOutput",
    "CommandAgent",
    "InfraFailure",
    "RunSignals",
    "ScriptedAgent",
    "SimulatedAgent",
    "ToolSession",
    "Transcript",
    "scrubbed_env",
]
