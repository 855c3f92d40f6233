"""The public names of ``pairbench.spec``: changing them is a deliberate edit here."""

from __future__ import annotations

import pairbench.spec


def test_public_names() -> None:
    assert pairbench.spec.__all__ == [
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
    assert all(hasattr(pairbench.spec, name) for name in pairbench.spec.__all__)
