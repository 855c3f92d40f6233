"""The experiment file: its models, loading with every problem found, and its hash."""

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
