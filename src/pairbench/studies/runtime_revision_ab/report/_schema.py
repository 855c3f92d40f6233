"""``summary.json`` ``revision``: the runtime-revision-ab report (``_revision``).

Present only when the run's results carry `pairbench.rab-scenario/1` evidence. Outcomes
are `passed`, `scored_failure`, `pre_inference_rejection` (scored), `infra` (unscored) and
`missing` (no record, or a record without evidence).
"""

from __future__ import annotations

from pairbench.report.summary._schema_pairs import Record
from pairbench.studies.runtime_revision_ab.report._schema_gates import (
    Audit,
    Gate,
    RegressionDeclared,
    Release,
)
from pairbench.studies.runtime_revision_ab.report._schema_metrics import ArmMetrics


class Scenario(Record):
    """One scenario of the campaign."""

    task: str
    """The task id."""
    scenario: str
    """Its `labels.scenario` (e.g. AR-001), else the task id."""


class CampaignSuccess(Record):
    """Task success of one campaign: every outcome out of all its scenarios."""

    pair: int
    """The campaign pair (trial index)."""
    arm: str
    """The arm (revision)."""
    campaign: str | None
    """The campaign id from run.json's schedule; `null` when it lists none."""
    position: int | None
    """Its position within the pair (0 ran first)."""
    tasks: int
    """Scenarios in the campaign: the denominator."""
    passed: int
    """Passed acceptance."""
    scored_failure: int
    """Scored, not passed."""
    pre_inference_rejection: int
    """Scored, not passed, with zero provider requests."""
    infra: int
    """Unscored infrastructure outcomes."""
    missing: int
    """No record or no evidence."""
    infra_attempts: int
    """Attempts kept under `infra/` for this campaign (replaced or not)."""


class GridRow(Record):
    """One scenario across every pair: outcomes per arm, k/N and discordance."""

    task: str
    """The task id."""
    scenario: str
    """The scenario label."""
    baseline: list[str]
    """The baseline's outcome in each pair, in `revision.pairs` order."""
    candidate: list[str]
    """The candidate's outcome in each pair."""
    pairs: int
    """N: pairs."""
    baseline_passed: int
    """Baseline passes."""
    baseline_scored: int
    """Baseline scored cells (its k/N denominator)."""
    candidate_passed: int
    """Candidate passes."""
    candidate_scored: int
    """Candidate scored cells."""
    both: int
    """Pairs both arms passed (both scored)."""
    baseline_only: int
    """Discordant pairs only the baseline passed."""
    candidate_only: int
    """Discordant pairs only the candidate passed."""
    neither: int
    """Pairs neither passed (both scored)."""
    unscored: int
    """Pairs left out because an arm was unscored."""


class PairDifference(Record):
    """D_i of one pair: candidate − baseline passes over scenarios both arms scored."""

    pair: int
    """The pair."""
    scored_scenarios: int
    """Scenarios both arms scored in this pair."""
    baseline_passed: int
    """Baseline passes among them."""
    candidate_passed: int
    """Candidate passes among them."""
    d: int
    """`candidate_passed - baseline_passed`."""


class TInterval(Record):
    """The one-sample t interval of the mean D."""

    low: float
    """Lower end."""
    high: float
    """Upper end."""
    df: int
    """Degrees of freedom, N − 1."""
    sd: float
    """Sample standard deviation of D."""
    se: float
    """`sd / sqrt(N)`."""
    confidence: float
    """Its confidence."""


class PermutationInterval(Record):
    """The interval that inverts the exact sign-flip test: every shift of the mean D the
    test does not reject (``analysis.sign_flip_interval``); it excludes 0 exactly when the
    test's p is at most 1 − confidence. An end is `null` when unbounded (too few pairs)."""

    low: float | None
    """Lower end; `null`: unbounded."""
    high: float | None
    """Upper end; `null`: unbounded."""
    confidence: float
    """Its confidence."""


class CampaignTest(Record):
    """The campaign-level primary test (the pair is the replicate) and, beside it, McNemar
    over cells. In screening every p value is `null` and `statement` says why."""

    pairs: int
    """N."""
    differences: list[PairDifference]
    """Raw D_i per pair."""
    mean: float | None
    """Mean D; `null` without pairs."""
    t_interval: TInterval | None
    """`null` with fewer than 2 pairs, or in screening. Shown beside the primary interval,
    labelled as the t interval: it assumes roughly normal D and can disagree with the
    exact test."""
    sign_flip_interval: PermutationInterval | None
    """The primary interval (inverting the exact sign-flip test); `null` in screening, with
    no pairs, or past 20 pairs."""
    sign_flip_p: float | None
    """Exact two-sided sign-flip p over all 2^N assignments."""
    sign_flip_extreme: int | None
    """Assignments at least as extreme as observed."""
    assignments: int | None
    """2^N."""
    smallest_attainable_p: float | None
    """2 / 2^N: no result with N pairs can give less."""
    mcnemar_p: float | None
    """Exact McNemar over discordant (scenario, pair) cells; see `mcnemar_assumption`."""
    mcnemar_midp_p: float | None
    """Mid-p McNemar over the same cells, beside the exact p (the exact test is
    conservative)."""
    mcnemar_assumption: str
    """"treats cells as independent"."""
    baseline_only: int
    """Discordant cells only the baseline passed."""
    candidate_only: int
    """Discordant cells only the candidate passed."""
    sign_test_p: float | None
    """Exact sign test over scenarios' net direction (robustness)."""
    favours_candidate: int
    """Scenarios with more candidate-only than baseline-only pairs."""
    favours_baseline: int
    """Scenarios the other way."""
    statement: str | None
    """Why no test was run ("one stochastic screening pair, no superiority claim")."""


class Totals(Record):
    """Tokens and time over a set of cells of one arm."""

    cells: int
    """Cells in the set."""
    with_evidence: int
    """Of them, with evidence."""
    requests: int
    """Provider requests."""
    measured_requests: int
    """Requests with usage (coverage)."""
    input_measured: int | None
    """Measured input tokens (measured requests only)."""
    output_measured: int | None
    """Measured output tokens."""
    input_estimated: int | None
    """Estimated input tokens, apart."""
    end_to_end_sum_ms: float | None
    """Sum of end-to-end times (a lower bound when `timed_out` > 0)."""
    timed_out: int
    """Censored executions."""


class ArmTotals(Record):
    """One arm's totals: every cell, and the conditional subset (cells both arms passed)."""

    arm: str
    """The arm."""
    all: Totals
    """Over every assigned cell."""
    conditional: Totals
    """Over cells both arms passed: a conditional subset, not evidence of whole-campaign
    improvement."""


class Difference(Record):
    """Candidate − baseline over paired executions (both with evidence)."""

    pairs: int
    """Paired executions."""
    baseline_sum_ms: float | None
    """Baseline end-to-end sum."""
    candidate_sum_ms: float | None
    """Candidate end-to-end sum."""
    sum_difference_ms: float | None
    """Candidate − baseline sum."""
    median_difference_ms: float | None
    """Median of the paired differences (recorded values)."""
    median_low_ms: float | None
    """Smallest the median could be whatever the censored values are (`null`: unbounded)."""
    median_high_ms: float | None
    """Largest it could be."""
    censored: int
    """Differences with a timed-out member."""
    censoring_could_move: bool
    """Whether censored values could change the median."""
    token_pairs: int
    """Pairs both fully measured."""
    token_sum_difference: int | None
    """Candidate − baseline measured tokens, summed over `token_pairs`."""
    token_median_difference: float | None
    """Median of those differences."""


class TaskDifference(Difference):
    """Per task."""

    task: str
    """The task id."""
    scenario: str
    """The scenario label."""


class PairedDifferences(Record):
    """Per-task paired differences and over all tasks."""

    tasks: list[TaskDifference]
    """Per task, declared order."""
    all: Difference
    """Over every paired execution."""


class Revisions(Record):
    """One arm's source revision."""

    commit: str | None
    """The commit."""
    production_sha256: str | None
    """The production byte hash."""
    harness_commit: str | None
    """The pinned harness commit."""


class ServedModel(Record):
    """Which model served the run (run.json `identities.model_endpoint`)."""

    base_url: str | None
    """The upstream the proxy forwarded to."""
    build_info: str | None
    """The server's build (llama.cpp `build_info`)."""
    model_path: str | None
    """The model the server names."""
    models: list[str]
    """Ids `/v1/models` lists."""
    n_ctx: int | None
    """Context per slot."""
    slots: int | None
    """Slots."""
    gguf_sha256: str | None
    """SHA-256 of the GGUF when it was readable here."""
    gguf_file_type: int | None
    """`general.file_type` (15 is Q4_K_M)."""
    gguf_architecture: str | None
    """`general.architecture`."""
    missing: dict[str, str]
    """Identity fields not known, and why."""
    revisions: dict[str, Revisions]
    """Per arm: its revision."""


class Revision(Record):
    """The runtime-revision-ab report of the run."""

    evidence_schema: str
    """The evidence schema read (`pairbench.rab-scenario/1`)."""
    stage: str | None
    """`screening` or `confirmation`."""
    baseline: str
    """The reference arm."""
    candidate: str
    """The candidate arm."""
    scenarios: list[Scenario]
    """Declared order."""
    pairs: list[int]
    """Campaign pairs."""
    campaigns: list[CampaignSuccess]
    """Task success per campaign, by pair then position."""
    grid: list[GridRow]
    """The scenario × pair grid."""
    campaign_test: CampaignTest
    """The campaign-level test."""
    metrics: list[ArmMetrics]
    """The protocol's metric table, baseline then candidate."""
    totals: list[ArmTotals]
    """Token and time totals beside the conditional subset."""
    conditional_label: str
    """How the conditional subset is labelled."""
    paired_differences: PairedDifferences
    """Per-task paired differences of time and tokens."""
    trial_timeout_ms: float | None
    """The trial time limit (censoring)."""
    regression_rule: RegressionDeclared
    """What the regression gate called a demonstrated regression (the experiment's
    `agent.settings.regression`, else the protocol's default)."""
    gates: list[Gate]
    """Release gates, then the review-notes gate."""
    release: Release
    """The release gate over every gate and every required review note."""
    audit: Audit
    """The audit list."""
    model: ServedModel | None
    """`null` when run.json records no model endpoint."""
