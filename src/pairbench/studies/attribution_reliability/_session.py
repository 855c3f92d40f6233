"""What one attempt of the study keeps: the engine's report and how the session went.

The adapter answers with a ``SessionEvidence`` (as JSON) whatever happened, so a runtime
failure is scored on what the engine published, and the scorer reads every session from
the run's records the same way.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pairbench._model import Frozen
from pairbench.studies.attribution_reliability._score_models import SessionFailure, SessionRecord
from pairbench.studies.attribution_reliability._visit import SiteVisit
from pairbench.studies.attribution_reliability.engines._identity import EngineIdentity
from pairbench.studies.attribution_reliability.engines._models import EngineReport

SESSION_SCHEMA = "pairbench.attribution.session/1"


class SessionEvidence(Frozen):
    """One session: an end-to-end case browsed, or a package's recording judged."""

    schema_: Literal["pairbench.attribution.session/1"] = Field(
        default="pairbench.attribution.session/1", alias="schema"
    )
    case: str
    kind: Literal["e2e", "package"]
    mode: Literal["scan", "judge"]
    slug: str
    report: EngineReport | None
    failure: SessionFailure | None = None
    raw_output: str | None = None
    """The engine's own output when it was not a valid report (capped)."""
    audit_paths: list[str] = Field(default_factory=list)
    """Paths the site served (relative to ``/v/<slug>``, other origin prefixed ``other:``),
    the preflight's and any recording's included."""
    visit: SiteVisit | None = None
    """The site's evidence of the visit (``_visit``); ``None`` in evidence written before it."""
    manifests: list[str] = Field(default_factory=list)
    """The ``cases.json`` and ``packages.json`` the session ran from (the grader reads them)."""
    engine: EngineIdentity | None = None
    """The engine as it ran this session (program, source hash, commit, models...)."""
    preflight: list[int] = Field(default_factory=list)
    """The start page's status at each preflight check (a retry adds one)."""
    latency_ms: float
    recording_sha256: str | None = None
    """A package: the SHA-256 of the recording judged (recorded once per trial under the
    lock, the same bytes for every arm and run under it)."""
    cost_usd: float | None = None
    cost_provenance: Literal["measured", "estimated", "worst_case", "not_applicable", "missing"] = (
        "missing"
    )
    """``worst_case``: the engine declares a model but reported no cost, so the session is
    charged its declared worst case; ``not_applicable``: it declares none and reported no
    usage (a model-free engine)."""

    model_config = Frozen.model_config | {"populate_by_name": True}

    @property
    def runtime_failure(self) -> bool:
        return self.failure is not None

    def record(self, trial: int) -> SessionRecord:
        """The scorer's record of this session as trial ``trial`` of its case."""
        return SessionRecord.model_validate(
            {
                "case": self.case,
                "kind": self.kind,
                "trial": trial,
                "status": "runtime_failure" if self.failure is not None else "ran",
                "failure": self.failure,
                "report": self.report,
                "raw_output": self.raw_output,
                "cost_usd": self.cost_usd,
                "cost_provenance": self.cost_provenance,
                "latency_ms": self.latency_ms,
                "audit_paths": self.audit_paths,
                "visit": self.visit,
            }
        )
