"""The experiment file: its models, loading with every problem found, and its hash."""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
    from pairbench.spec._canonical import canonical_hash, canonical_json
    from pairbench.spec._hypotheses import Hypothesis
    from pairbench.spec._load import LoadedExperiment, Problem, check_experiment, load_experiment
    from pairbench.spec._models import (
        AgentSpec,
        Arm,
        Experiment,
        McpServer,
        Tools,
    )
    from pairbench.spec._policies import Budget, CampaignOrder, InfraPolicy
    from pairbench.spec._task import GraderRef, Task

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AgentSpec": "pairbench.spec._models",
        "Arm": "pairbench.spec._models",
        "Budget": "pairbench.spec._policies",
        "CampaignOrder": "pairbench.spec._policies",
        "Experiment": "pairbench.spec._models",
        "GraderRef": "pairbench.spec._task",
        "Hypothesis": "pairbench.spec._hypotheses",
        "InfraPolicy": "pairbench.spec._policies",
        "LoadedExperiment": "pairbench.spec._load",
        "McpServer": "pairbench.spec._models",
        "Problem": "pairbench.spec._load",
        "Task": "pairbench.spec._task",
        "Tools": "pairbench.spec._models",
        "canonical_hash": "pairbench.spec._canonical",
        "canonical_json": "pairbench.spec._canonical",
        "check_experiment": "pairbench.spec._load",
        "load_experiment": "pairbench.spec._load",
    },
)

__all__ = [
    "AgentSpec",
    "Arm",
    "Budget",
    "CampaignOrder",
    "Experiment",
    "GraderRef",
    "Hypothesis",
    "InfraPolicy",
    "LoadedExperiment",
    "McpServer",
    "Problem",
    "Task",
    "Tools",
    "canonical_hash",
    "canonical_json",
    "check_experiment",
    "load_experiment",
]
