"""The ``runtime-revision-ab`` study: two git revisions of the bundled minirt runtime as
arms, ten scenarios, campaigns, and the protocol's per-scenario evidence.

``pairbench init DIR --from runtime-revision-ab`` copies ``study/`` and writes the minirt
repository beside it (``make_example``); ``pairbench demo --study runtime-revision-ab`` runs
a screening pair and an auto-approved confirmation against the scripted model server.

**Usage**::

    repo = make_example(tmp / "minirt")          # commits equal PINNED anywhere
    with serve_model() as server:                # the scripted Chat Completions server
        result = run_scenario(worktree, "AR-001", server.base_url, tmp / "w", seed=3,
                              timeout_s=60)
        result.passed, result.unauthorized, result.provider_requests
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairbench.studies._study import DemoRequest, Study
from pairbench.studies.runtime_revision_ab._agent import MinirtAgent
from pairbench.studies.runtime_revision_ab._dispatch_events import (
    ClaimEvidence,
    DispatchEvent,
    claim_evidence,
    prohibited_attempts,
    read_events,
)
from pairbench.studies.runtime_revision_ab._evidence import scenario_evidence
from pairbench.studies.runtime_revision_ab._evidence_models import ScenarioEvidence
from pairbench.studies.runtime_revision_ab._example import PINNED, ExampleRepo, make_example
from pairbench.studies.runtime_revision_ab._grade import grade_minirt
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
    guarded_scenarios,
    load_scenario,
)
from pairbench.studies.runtime_revision_ab._snapshot import FileChange, FileState
from pairbench.studies.runtime_revision_ab.report._part import REPORT

MODEL_PORT = 18090
"""Where the study's experiment expects its model server (``proxy.upstream``)."""


def prepare(folder: Path) -> str:
    """Write the minirt repository the copied experiment names (``sources.minirt.repo``)."""
    repo = make_example(Path(folder) / "minirt")
    return f"wrote the minirt repository {repo.path} (commits: {', '.join(repo.commits)})"


if TYPE_CHECKING:
    import typer


def _commands() -> typer.Typer:
    from pairbench.studies.runtime_revision_ab._cli import commands

    return commands()


def _check(loaded: Any) -> list[str]:
    from pairbench.studies.runtime_revision_ab._check import study_rows

    return study_rows(loaded)


def _start_demo(request: DemoRequest) -> None:
    from pairbench.studies.runtime_revision_ab._demo import demo

    demo(request)


STUDY = Study(
    name="runtime-revision-ab",
    title="Baseline vs candidate git revision of an agent runtime: ten scenarios, campaigns",
    root=Path(__file__).parent / "study",
    prepare=prepare,
    report=REPORT,
    cli=_commands,
    demo=_start_demo,
    check=_check,
    guarded=guarded_scenarios,
)

__all__ = [
    "CANARY",
    "MODEL_PORT",
    "PINNED",
    "SCENARIO_IDS",
    "STUDY",
    "ClaimEvidence",
    "DispatchEvent",
    "ExampleRepo",
    "FileChange",
    "FileState",
    "MinirtAgent",
    "ModelServer",
    "Obligation",
    "Prohibited",
    "ProviderRequest",
    "Scenario",
    "ScenarioEvidence",
    "ScenarioResult",
    "Scope",
    "claim_evidence",
    "grade_minirt",
    "load_scenario",
    "make_example",
    "prepare",
    "prohibited_attempts",
    "read_events",
    "run_scenario",
    "scenario_evidence",
    "serve_model",
]
