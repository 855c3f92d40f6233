"""``summary.json`` ``revision`` gates, release verdict and audit list (``_gates``, ``_release``).

A gate's status is `pass`, `fail` or `missing` (a scenario without evidence, none failing);
the review-notes gate's is `pass` or `blocked` (a required note missing). The release is
`fail`, `blocked`, `missing` or `pass`, in that order of precedence.
"""

from __future__ import annotations

from pydantic import Field

from pairbench.report.summary._schema_pairs import Record


class GateCampaign(Record):
    """One gate in one candidate campaign."""

    pair: int
    """The pair."""
    campaign: str | None
    """The candidate campaign's id."""
    status: str
    """`pass`, `fail`, or `missing` (a scenario without evidence, none failing)."""
    failing: list[str]
    """Scenarios failing the gate."""
    missing: list[str]
    """Scenarios without evidence (cannot pass a gate)."""
    reviewed: list[str]
    """Demonstrated regressions a review note accounts for."""
    effects: list[str] = Field(default_factory=list)
    """What failed, per failing scenario: the unauthorized-effects gate's effects
    (`scenario: area:path (change)`, as the snapshots saw them) and the self-report gate's
    mismatches (`scenario: what: runtime N, proxy M`)."""


class Gate(Record):
    """A release gate over every candidate campaign, regardless of aggregates."""

    gate: str
    """Its name."""
    title: str
    """What it requires."""
    status: str
    """`fail` if any campaign fails it, else `missing` if any is unjudged, else `pass`; the
    review-notes gate: `blocked` or `pass`."""
    campaigns: list[GateCampaign]
    """Per candidate campaign (none for the review-notes gate, judged over the run)."""
    blocked: list[str] = Field(default_factory=list)
    """The review-notes gate: scenarios whose required note is missing."""


class Trace(Record):
    """Where a cell's traces are, relative to the run folder."""

    result: str
    """The result file."""
    transcript: str | None
    """The transcript; `null` when none was written."""


class AuditCell(Record):
    """A cell to inspect: a changed outcome or an apparent efficiency gain."""

    task: str
    """The task id."""
    scenario: str
    """The scenario."""
    pair: int
    """The pair."""
    baseline_outcome: str
    """Baseline outcome."""
    candidate_outcome: str
    """Candidate outcome."""
    changed_outcome: bool
    """A discordant cell."""
    fewer_tokens: int | None
    """Candidate − baseline measured tokens when negative (both fully measured)."""
    lower_latency_ms: float | None
    """Candidate − baseline end-to-end time when negative (neither timed out)."""
    baseline_trace: Trace | None
    """The baseline's traces."""
    candidate_trace: Trace | None
    """The candidate's traces."""


class Review(Record):
    """A scenario that needs (or has) a review note; notes never change a number."""

    task: str
    """The task id."""
    scenario: str
    """The scenario."""
    why: list[str]
    """"always reviewed (protocol)", "demonstrated regression", or "note given"."""
    required: bool
    """A note is required."""
    by: str | None
    """The reviewer; `null`: missing."""
    note: str | None
    """The note (`manual_review.json` `notes`); `null`: missing."""


class Audit(Record):
    """Changed outcomes and apparent efficiency gains with traces; review notes."""

    cells: list[AuditCell]
    """By task then pair."""
    reviews: list[Review]
    """By task."""


class RegressionDeclared(Record):
    """What a demonstrated regression is, as the experiment declared it (or the default)."""

    min_pairs: int
    """Pairs in which the baseline passed a scenario and the candidate failed it."""
    allow_reverse: bool
    """`false`: one pair the other way round (candidate passed, baseline failed) means no
    regression; `true`: such pairs are ignored."""
    declared: bool
    """`true`: `agent.settings.regression` in the experiment; `false`: the default."""
    statement: str
    """The rule in words."""
    demonstrable: bool
    """The run has at least `min_pairs` pairs (a screening pair cannot demonstrate one
    under the default)."""


class Release(Record):
    """The release gate: every gate and every required review note."""

    status: str
    """`fail` (a gate failed), else `blocked` (a required review note is missing), else
    `missing` (a gate lacks evidence), else `pass`."""
    statement: str
    """Every reason, e.g. `blocked: review note missing for AR-005`."""
    failing: list[str]
    """Titles of the failing gates."""
    blocked: list[str]
    """Scenarios whose required review note is missing."""
    missing: list[str]
    """Titles of gates missing evidence."""
