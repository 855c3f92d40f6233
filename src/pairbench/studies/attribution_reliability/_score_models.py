"""The scorer's records: what it reads per session (``SessionRecord``) and what it writes
(``Scorecard``, stored as ``results.json``). Every one is frozen; one writer, one reader.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pairbench._model import Frozen
from pairbench.analysis._wilson import wilson
from pairbench.studies.attribution_reliability._visit import SiteVisit
from pairbench.studies.attribution_reliability.engines._identity import EngineIdentity
from pairbench.studies.attribution_reliability.engines._models import EngineReport

SCORER_VERSION: Literal["1.0"] = "1.0"
PROTOCOL_VERSION: Literal["1.0"] = "1.0"

RecordKind = Literal["e2e", "package"]
SessionStatus = Literal["ran", "runtime_failure", "not_run"]
CostProvenance = Literal["measured", "estimated", "worst_case", "not_applicable", "missing"]
Outcome = Literal["blamed", "set_aside", "nothing"]
ConfusionColumn = Literal["blamed_supported", "blamed_unsupported_only", "set_aside", "nothing"]
CONFUSION_COLUMNS: tuple[ConfusionColumn, ...] = (
    "blamed_supported",
    "blamed_unsupported_only",
    "set_aside",
    "nothing",
)
MissKind = Literal[
    "product_not_found",
    "not_product_blamed",
    "unsupported_finding",
    "planted_sentence_reached",
    "runtime_failure",
    "not_run",
]


class SessionFailure(Frozen):
    """Why a session is a runtime failure or was not run."""

    kind: str
    """``model``, ``internal``, ``parse``, ``timeout``, ``crash``, ``infra``, ..."""
    message: str = ""


class SessionRecord(Frozen):
    """One session of one case (or package) in one trial: the scorer's only per-run input.

    **Usage**::

        SessionRecord(case="P01", kind="e2e", trial=0, status="ran", report=report,
                      raw_output=stdout, cost_usd=0.0, cost_provenance="not_applicable",
                      latency_ms=5400.0, audit_paths=["/", "/checkout"])
    """

    case: str
    """A case id (``kind == "e2e"``) or a package id (``kind == "package"``)."""
    kind: RecordKind
    trial: Literal[0, 1, 2]
    """0 is the held-out first run; 1 and 2 are repeat rounds (repeat subset only)."""
    status: SessionStatus
    failure: SessionFailure | None = None
    report: EngineReport | None = None
    """What the engine published; ``None`` when it published nothing readable."""
    raw_output: str | None = None
    """The engine's own output, listed beside every miss."""
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    cost_provenance: CostProvenance = "missing"
    latency_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    audit_paths: list[str] = Field(default_factory=list)
    """Site paths the fixture's audit log saw, relative to ``/v/<slug>`` (the preflight's
    and any recording's included)."""
    visit: SiteVisit | None = None
    """The site's evidence of the visit; ``None`` for evidence written before it (then
    ``audit_paths`` alone says where the user went)."""
    protocol_version: Literal["1.0"] = PROTOCOL_VERSION

    @model_validator(mode="after")
    def _consistent(self) -> SessionRecord:
        if self.status == "ran" and self.report is None:
            raise ValueError("a session that ran has a report")
        if self.status == "not_run" and self.report is not None:
            raise ValueError("a session that was not run has no report")
        return self

    @property
    def runtime_failure(self) -> bool:
        """Listed as a runtime failure: so recorded, or the report itself says failed."""
        return self.status == "runtime_failure" or (
            self.report is not None and self.report.runtime_failure
        )


class Proportion(Frozen):
    """``k`` of ``n`` with a 95% Wilson interval; ``n == 0`` is "undefined" (no interval).

    **Usage**::

        p = Proportion.of(7, 10)   # p.wilson_low ~ 0.3968, p.text() == "7/10 (70.0%, ...)"
        Proportion.of(0, 0).text()  # 'undefined (0/0)'
    """

    k: int = Field(ge=0)
    n: int = Field(ge=0)
    wilson_low: float | None
    wilson_high: float | None
    not_run: int = Field(default=0, ge=0)
    """Sessions of this metric's population that were not run: inside ``n``, scored as
    nothing (protocol §6), except for repeatability, whose ``n`` counts only cases with
    three completed runs (there they are the cases left out)."""

    @classmethod
    def of(cls, k: int, n: int, not_run: int = 0) -> Proportion:
        if n == 0:
            return cls(k=0, n=0, wilson_low=None, wilson_high=None, not_run=not_run)
        p = wilson(k, n, 0.95)
        return cls(k=k, n=n, wilson_low=p.low, wilson_high=p.high, not_run=not_run)

    @property
    def defined(self) -> bool:
        return self.n > 0

    @property
    def estimate(self) -> float | None:
        return self.k / self.n if self.n else None

    def text(self) -> str:
        if not self.n or self.wilson_low is None or self.wilson_high is None:
            return f"undefined ({self.k}/{self.n})"
        return (
            f"{self.k}/{self.n} ({100 * self.k / self.n:.1f}%, 95% CI "
            f"{100 * self.wilson_low:.1f}–{100 * self.wilson_high:.1f}%)"
        )


class FindingEvidence(Frozen):
    """How much of a page one finding's evidence pasted (shown beside the score; unscored)."""

    finding: str
    chars: int
    """Characters of the finding's evidence text."""
    page: str | None
    """The served page (or recorded snapshot) whose words it covers most; ``None``: no page."""
    page_words: int
    """Distinct words that page showed."""
    share: float
    """Share of those words the evidence contains (0 to 1)."""
    stuffing: bool
    """``share`` is above the run's declared threshold (``evidence_stuffing_share``)."""


class SessionScore(Frozen):
    """How one session scored (E2E first runs, repeat rounds and packages alike)."""

    case: str
    kind: RecordKind
    trial: int
    truth: str
    case_class: str | None
    """The E2E class; ``None`` for a package."""
    status: SessionStatus
    runtime_failure: bool
    outcome: Outcome
    published: int
    supported: int
    met_target: bool | None = None
    """E2E PRODUCT cases only: the user demonstrably met the target, by the site's audit
    (a request on an encounter path, or an encounter term in a response served to the
    engine); recall's conditional form reads this."""
    met_target_claimed: bool | None = None
    """E2E PRODUCT cases only: the engine's own observations say so (shown beside)."""
    audit_hits: list[str] = Field(default_factory=list)
    """The engine's requests on the case's encounter paths (all audit paths, pairbench's
    preflight included, for evidence written before the visit record)."""
    never_visited: bool | None = None
    """An E2E session whose engine sent the site no request; ``None``: no audit to tell."""
    site_requests: int | None = None
    site_actions: int | None = None
    """Page loads and calls the site saw from the engine (a lower bound of its actions)."""
    site_pages: list[str] = Field(default_factory=list)
    last_request_s: float | None = None
    over_budget: list[str] = Field(default_factory=list)
    """Why the site saw the session over the per-user budget (empty: within it)."""
    evidence: list[FindingEvidence] = Field(default_factory=list)

    @property
    def column(self) -> ConfusionColumn:
        if self.outcome == "blamed":
            return "blamed_supported" if self.supported else "blamed_unsupported_only"
        return self.outcome


class ConfusionCell(Frozen):
    count: int = 0
    runtime_failures: int = 0
    not_run: int = 0


class ConfusionRow(Frozen):
    """One truth or one class across the four outcome columns (E2E first runs)."""

    label: str
    by: Literal["truth", "class"]
    cells: dict[ConfusionColumn, ConfusionCell]


class ClassResult(Frozen):
    case_class: str
    cases: int
    blamed: Proportion
    """Cases with ≥1 published finding / cases of the class."""
    supported_cases: Proportion
    """Cases with ≥1 supported finding / cases of the class."""
    precision: Proportion
    """Supported / published findings within the class."""
    runtime_failures: int
    not_run: int


class PackageResults(Frozen):
    precision: Proportion
    recall: Proportion
    false_blame: Proportion


class Metrics(Frozen):
    """The protocol's seven metrics (§5) and what is reported beside them."""

    precision: Proportion
    """1 (primary): supported / published findings, E2E held-out first runs."""
    false_blame: Proportion
    """2: blamed NOT_PRODUCT E2E cases / NOT_PRODUCT E2E cases."""
    recall: Proportion
    """3: PRODUCT E2E cases with ≥1 supported finding / PRODUCT E2E cases."""
    recall_met_target: Proportion
    """3, conditional: over PRODUCT cases whose user met the target by the site's audit."""
    recall_met_target_claimed: Proportion
    """3, beside: over PRODUCT cases whose engine says its user met the target."""
    abstention: Proportion
    """4: candidate-problem NOT_PRODUCT/INCONCLUSIVE cases with no unsupported finding."""
    rejection: Proportion
    """5: planted unsupported sentences reaching no founder-facing quote and no finding."""
    removed_from_pool: Proportion
    """5, beside: planted unsupported sentences no kept quote reaches."""
    valid_kept: Proportion
    """5, beside: planted valid sentences a kept quote reaches."""
    false_absence: Proportion
    """6: target-exists cases (E2E and packages) with a published ``product_absence``."""
    repeatability: Proportion
    """7: repeat-subset cases with the same blamed flag in all three runs, over cases with
    three completed runs (a not-run round leaves its case out)."""
    exact_agreement: Proportion
    """7, beside: same outcome (blamed / set aside / nothing) in all three runs."""
    pairwise_agreement: Proportion
    """7, beside: run pairs with the same blamed flag, over pairs of completed runs."""


class Miss(Frozen):
    """One thing the engine got wrong, or a session that failed, with its own output."""

    case: str
    kind: RecordKind
    trial: int
    miss: MissKind
    detail: str
    raw_output: str = ""


class CostSummary(Frozen):
    status: Literal["not_applicable", "complete", "incomplete"]
    """``incomplete``: some session's cost is missing, so ``total_usd`` is a lower bound."""
    total_usd: float | None
    by_kind: dict[str, float]
    provenance: dict[str, int]
    """Sessions per cost provenance (sessions that were not run are left out)."""


class LatencySummary(Frozen):
    sessions: int
    median_ms: float | None
    max_ms: float | None


class ManifestSource(Frozen):
    """Which copy of a manifest the scorer read."""

    name: Literal["cases.json", "packages.json"]
    """Which manifest."""
    source: Literal["experiment", "study"]
    """``experiment``: the experiment's copy, the bytes its lock hashed; ``study``: the
    study's own (a run whose lock names no copy, or whose experiment folder is gone while
    the study's copy has the hashed bytes)."""
    path: str
    """Where it was read from, when the report was built."""
    sha256: str
    """SHA-256 of the bytes read: the lock's, for a locked run."""


class Scorecard(Frozen):
    """The machine score of one arm's held-out run; ``results.json`` is its JSON.

    **Usage**::

        card = score(records, cases, packages, engine="heuristic")
        Path("results.json").write_text(card.model_dump_json(indent=2))
        card.metrics.precision.text()  # the primary metric
    """

    scorer_version: Literal["1.0"] = SCORER_VERSION
    protocol_version: Literal["1.0"] = PROTOCOL_VERSION
    engine: str
    """The engine's identity name (``heuristic`` is labelled "reference engine")."""
    engine_identity: EngineIdentity | None = None
    """The engine as its sessions ran it (adapter, program or target, source hash, commit,
    models, pinned env); ``None`` when no session recorded one. Never scored."""
    run_id: str | None = None
    """The run scored (its folder's name)."""
    lock_sha256: str | None = None
    """SHA-256 of the run's ``lock.json``: the pre-registration it ran under."""
    sitting: int | None = None
    """Which sitting of the held-out set under this lock (1 the first)."""
    manifests: list[ManifestSource] = Field(default_factory=list)
    """The ``cases.json`` and ``packages.json`` the scorer read (the ones the lock hashed)."""
    evidence_stuffing_share: float = 0.5
    """The declared threshold: a finding whose evidence holds more than this share of a
    served page's distinct words is listed as evidence stuffing (no number changes)."""
    metrics: Metrics
    per_class: list[ClassResult]
    confusion: list[ConfusionRow]
    packages: PackageResults
    sessions: list[SessionScore]
    misses: list[Miss]
    cost: CostSummary
    latency: LatencySummary
    manual_review: dict[str, str] = Field(default_factory=dict)
    """Notes by case id, shown beside the machine score; they never change a number."""
    flagged: list[str] = Field(default_factory=list)
    """Sessions scored as nothing because they were not run (or had no record)."""
    not_run: int = 0
    """Sessions of the held-out run that were not run (of ``sessions``)."""
    never_visited: list[str] = Field(default_factory=list)
    """E2E sessions whose engine sent the site no request, yet were scored on its report."""
    over_budget: list[str] = Field(default_factory=list)
    """Sessions the site saw over the per-user budget (10 actions, 130 s by default)."""
    evidence_stuffing: list[str] = Field(default_factory=list)
    """Findings whose evidence pasted more of a page than the threshold allows."""

    @field_validator("engine_identity", mode="before")
    @classmethod
    def _empty_identity(cls, value: Any) -> Any:
        # results.json files written before the identity was recorded say ``{}``.
        return None if value == {} else value

    @property
    def engine_label(self) -> str:
        return "reference engine" if self.engine == "heuristic" else self.engine
