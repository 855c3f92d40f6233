"""The ``runtime-revision-ab`` study's bundled offline example (not yet a registered study).

**Usage**::

    repo = make_example(tmp / "minirt")          # commits equal PINNED anywhere
    with serve_model() as server:                # the scripted Chat Completions server
        result = run_scenario(worktree, "AR-001", server.base_url, tmp / "w", seed=3,
                              timeout_s=60)
        result.passed, result.unauthorized, result.provider_requests
"""

from pairbench.studies.runtime_revision_ab._dispatch_events import (
    ClaimEvidence,
    DispatchEvent,
    claim_evidence,
    prohibited_attempts,
    read_events,
)
from pairbench.studies.runtime_revision_ab._example import PINNED, ExampleRepo, make_example
from pairbench.studies.runtime_revision_ab._model_server import ModelServer, serve_model
from pairbench.studies.runtime_revision_ab._provider import ProviderRequest
from pairbench.studies.runtime_revision_ab._result import ScenarioResult
from pairbench.studies.runtime_revision_ab._run import CANARY, run_scenario
from pairbench.studies.runtime_revision_ab._scenario import (
    SCENARIO_IDS,
    Obligation,
    Prohibited,
    Scenario,
    Scope,
    load_scenario,
)
from pairbench.studies.runtime_revision_ab._snapshot import FileChange, FileState

__all__ = [
    "CANARY",
    "PINNED",
    "SCENARIO_IDS",
    "ClaimEvidence",
    "DispatchEvent",
    "ExampleRepo",
    "FileChange",
    "FileState",
    "ModelServer",
    "Obligation",
    "Prohibited",
    "ProviderRequest",
    "Scenario",
    "ScenarioResult",
    "Scope",
    "claim_evidence",
    "load_scenario",
    "make_example",
    "prohibited_attempts",
    "read_events",
    "run_scenario",
    "serve_model",
]
