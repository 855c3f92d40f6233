"""Agent adapters: the protocol, the scrubbed environment and the built-in adapters."""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
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

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Agent": "pairbench.agents._protocol",
        "AgentContext": "pairbench.agents._protocol",
        "AgentOutput": "pairbench.agents._protocol",
        "BASE_ALLOW": "pairbench.agents._env",
        "CommandAgent": "pairbench.agents.command",
        "InfraFailure": "pairbench.agents._protocol",
        "RunSignals": "pairbench.agents._protocol",
        "ScriptedAgent": "pairbench.agents._scripted",
        "SimulatedAgent": "pairbench.agents._simulated",
        "ToolSession": "pairbench.agents._protocol",
        "Transcript": "pairbench.store._transcript",
        "scrubbed_env": "pairbench.agents._env",
    },
)

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
