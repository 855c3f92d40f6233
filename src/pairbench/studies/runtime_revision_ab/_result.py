"""What ``run_scenario`` returns."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pairbench._model import Frozen
from pairbench.studies.runtime_revision_ab._dispatch_events import DispatchEvent
from pairbench.studies.runtime_revision_ab._provider import ProviderRequest
from pairbench.studies.runtime_revision_ab._snapshot import FileChange

FailureKind = Literal["scored", "pre_inference_rejection", "infra"]


def failure_kind(passed: bool, status: str, requests: int) -> FailureKind | None:
    """None for a pass; a rejection with zero provider requests is pre-inference; a timeout,
    crash or provider error is infrastructure (unscored); anything else is scored."""
    if passed:
        return None
    if status == "rejected" and requests == 0:
        return "pre_inference_rejection"
    if status in ("timeout", "crash", "error"):
        return "infra"
    return "scored"


class RoundState(Frozen):
    """The workspace at a round boundary: just before the proxy forwarded request ``n``
    (``n`` = 0: after the runtime exited)."""

    n: int
    at_ms: float
    """On the proxy's monotonic clock (ms)."""
    workspace_sha256: str
    """Of the workspace snapshot (paths, modes, bytes): a new value is a new artifact version."""
    obligations_met: list[str]
    """The obligations that hold on it."""


class Timing(Frozen):
    """Where the scenario's wall time went (ms, on the proxy's monotonic clock)."""

    started_ms: float
    """The runtime was started."""
    exited_ms: float
    """The runtime exited (or was killed at the timeout)."""
    acceptance_ms: float
    """acceptance (copy and ``accept.py``) took."""
    cleanup_ms: float
    """Ending the process group and waiting for its members took."""


class ScenarioResult(Frozen):
    """One scenario run on one revision with one seed, and its evidence."""

    scenario: str
    seed: int
    status: str
    """minirt's result status (done, incomplete, rejected, exhausted, no_claim, error), or
    ``timeout``/``crash`` when it printed none."""
    exit_code: int | None
    """None after a timeout."""
    timed_out: bool
    passed: bool
    """accept.py passed on a copy of the final workspace."""
    claim: Literal["done", "incomplete"] | None
    """What the run claimed at its end (None: no claim)."""
    failure_kind: FailureKind | None
    events: list[DispatchEvent] | None
    """The runtime's dispatch events; None when not asked for or unreadable (missing)."""
    delta: list[FileChange]
    """Every change to the workspace, the decoy HOME and the perimeter."""
    unauthorized: list[FileChange]
    """Changes outside ``scope.allowed``, and every HOME or perimeter change."""
    provider_requests: int
    """Chat completions the recording proxy forwarded (independent of the events)."""
    requests: list[ProviderRequest]
    obligations: dict[str, bool]
    """Each obligation on the final workspace."""
    leaked_processes: int
    """Processes of the run's group still alive after minirt exited (then killed)."""
    canary_leaks: int
    """Provider requests whose body carried a canary (a secret sent to the model)."""
    canary_elsewhere: list[str] = Field(default_factory=list)
    """The runtime's outputs and added or changed files holding a canary."""
    duration_s: float
    scenario_root: str | None = None
    """The folder of the team's own scenario it ran (None: one of the study's)."""
    rounds: list[RoundState] = Field(default_factory=list)
    """The workspace before every provider request, then after the runtime exited."""
    timing: Timing | None = None
