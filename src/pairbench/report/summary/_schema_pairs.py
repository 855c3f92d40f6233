"""The paired parts of ``summary.json``: one pair of arms, its success and its metrics.

Also the base every summary model shares (:class:`Record`), the :class:`Proportion`
that most sections hold, and the keys many models share (``ArmName``, ...). ``_schema``
assembles the whole :class:`~._schema.Summary`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from pairbench._model import Frozen


class Record(Frozen):
    """Frozen, no unknown keys; each field's docstring is its meaning in the schema
    reference, SUMMARY_SCHEMA.md (``pairbench._schema_doc`` reads them from the source: asking
    pydantic to keep them would read this source on every import, ~60 ms per report)."""


# Keys many models hold, each meaning stated once (the reference reads it as a field's own).
ArmName = Annotated[str, Field(description="The arm.")]
TaskName = Annotated[str, Field(description="The task.")]
TrialIndex = Annotated[int, Field(description="The trial.")]


class Proportion(Record):
    """`k` of `n` with a Wilson score interval at `confidence`. When `n == 0`, `estimate`,
    `low` and `high` are `null` (reports show "n/a"); never NaN."""

    k: int
    """Successes."""
    n: int
    """Trials counted."""
    estimate: float | None
    """`k / n`; `null` when `n == 0`."""
    low: float | None
    """Lower end of the Wilson score interval; `null` when `n == 0`."""
    high: float | None
    """Upper end of the Wilson score interval; `null` when `n == 0`."""


class TaskClustered(Record):
    """The task-clustered interval of a success difference.

    **Bootstrap seeds.** Each bootstrap's seed is the first 8 bytes (big-endian) of
    `sha256("pairbench.report|<run_seed>|<a>|<b>|success|<family>")`, where `<run_seed>`
    is run.json's `run_seed` (for a run.json without one, the runner's default drawn from
    the run ID) and `<family>` is `with_replacements` or `without_replacements`; the
    generator is `numpy.random.default_rng(seed)`. The same run always reports the same
    interval."""

    ci95: list[float] | None
    """Percentile interval of the mean per-pair difference (A passed − B passed), from a
    cluster bootstrap resampling whole tasks; `null` with a single task."""
    method: str
    """Names the method, or says why no interval was computed."""
    tasks: int
    """Clusters: tasks with at least one pair."""
    reps: int
    """Resamples: 10,000 unless `pairbench report --bootstrap-reps` says otherwise."""
    seed: int
    """The bootstrap's seed (see Bootstrap seeds above)."""


class Difference(Record):
    """Success of A − B over the pairs."""

    estimate: float | None
    """`(a_only − b_only) / pairs`; `null` with no pairs."""
    ci95: list[float] | None
    """Newcombe's score interval for paired proportions (method 10, Statistics in Medicine
    1998;17:2635); `null` with no pairs."""
    method: str
    """Names the interval's method."""
    task_clustered: TaskClustered | None
    """`null` when every task has at most one pair (pairs are then independent, and
    Newcombe's interval stands); otherwise the task-clustered bootstrap interval."""


class PairedSuccess(Record):
    """Two arms' success on the same trials. A *pair* is one (task, trial) where both arms
    have a scored outcome."""

    pairs: int
    """Pairs: trials both arms scored."""
    unmatched_a: int
    """Scored trials of A whose partner in B is not scored (left out)."""
    unmatched_b: int
    """Scored trials of B whose partner in A is not scored (left out)."""
    both: int
    """The paired 2x2 table: pairs both arms passed."""
    a_only: int
    """Pairs only A passed."""
    b_only: int
    """Pairs only B passed."""
    neither: int
    """Pairs neither arm passed."""
    success_a: Proportion
    """A's success over the pairs."""
    success_b: Proportion
    """B's success over the pairs."""
    difference: Difference
    """Success of A − B."""
    correlation: float | None
    """Phi correlation between the arms' outcomes on the same trial (0 when a margin is
    zero, as when one arm passes every pair; `null` with no pairs)."""
    mcnemar_exact_p: float | None
    """Exact two-sided McNemar p (binomial on the discordant pairs); `null` unless
    `declared`."""
    mcnemar_midp_p: float | None
    """Mid-p McNemar (the exact p less half the probability of the observed split; Fagerland
    et al. 2013: closer to the nominal level than the exact test, which is conservative),
    shown beside the exact p; the exact p stays the one Holm adjusts. `null` unless
    `declared`."""
    mcnemar_holm_p: float | None
    """Holm-adjusted `mcnemar_exact_p`, over the declared comparisons of the run within
    this family (with or without replacements): equal to the raw p when only one is
    declared; the reports show the column only when several are. `null` unless
    `declared`."""


class Censoring(Record):
    """How censoring bears on a median of paired differences.

    **Censoring.** A timeout censors its trial. For durations of the whole trial (`wall_ms`,
    `agent_ms`) the value is the trial timeout from run.json
    `policies.budget.trial_timeout_s` (in ms) and the truth exceeds it; a median reached by
    censoring has `relation` `">"` and `bound` the limit (reports: `"> 60000 ms"`). Other
    metrics of a timed-out trial keep their recorded value as a lower bound (`">="`). When
    a pair has a censored member, the difference's `ci95` is taken conservatively: the
    lower end with every censored difference as low as it could be, the upper end as high
    (`null` where unbounded)."""

    pairs: int
    """Censored pairs."""
    a_only: int
    """Pairs with only A censored: the true difference is at least the recorded one."""
    b_only: int
    """Pairs with only B censored: the true difference is at most the recorded one."""
    both: int
    """Pairs with both censored: the true difference could lie either way."""
    median_could_move: bool
    """Censoring could move the median."""
    median_low: float | None
    """The smallest the median could be; `null` if unbounded."""
    median_high: float | None
    """The largest the median could be; `null` if unbounded."""
    direction: Literal["unaffected", "at least", "at most", "between", "unbounded"]
    """Where that leaves the true median: `"at least"` `median_low`, `"at most"`
    `median_high`, `"between"` both."""


class ArmMedian(Record):
    """One arm's median of a metric over the pairs used."""

    estimate: float | None
    """The median; `null` when censoring reaches it or with no values."""
    censored: bool
    """Censoring reaches the median."""
    relation: Literal["=", ">", ">="]
    """`"="`; `">"`: the median exceeds `bound`, the trial timeout; `">="`: at least
    `bound`."""
    bound: float | None
    """The bound of a censored median; `null` when not censored."""
    n: int
    """Values."""
    n_censored: int
    """Censored values."""


class PairedDifference(Record):
    """The median of paired differences A − B of one metric."""

    estimate: float | None
    """The median; `null` with no pair."""
    ci95: list[float | None] | None
    """Order statistics of the differences, sign-test inversion: distribution-free. When a
    pair is censored, taken conservatively (see [Censoring](#censoring)); an end is `null`
    where unbounded."""
    censored: Literal[False] | Censoring
    """`false` when no pair has a censored member; otherwise how censoring bears on it."""
    n: int
    """Differences."""
    method: str
    """Names the method, or says why there is none."""


class MetricComparison(Record):
    """One metric compared between the arms of a pair. Only measured values enter the
    medians; missing is never 0."""

    label: str
    """For people: e.g. `"Wall time"`."""
    unit: str
    """For people: e.g. `"ms"`."""
    pairs: int
    """Pairs considered."""
    n_used: int
    """Pairs with a measured value in both arms: every median below is over these."""
    n_missing: int
    """Pairs where either arm has no value (missing is never 0)."""
    n_estimated: int
    """Pairs where either arm has only an estimated value: kept apart (estimates are in
    `cost`), never mixed with measured ones."""
    median_a: ArmMedian
    """A's median."""
    median_b: ArmMedian
    """B's median."""
    median_paired_difference: PairedDifference
    """The median of paired differences A − B."""


class PairMetrics(Record):
    """Each metric compared over a pair's trials, in this order. Token metrics are as in
    [ArmCost](#armcost). No p value exists for metrics: only declared success comparisons
    are tested."""

    wall_ms: MetricComparison
    """Measured wall time."""
    tool_client_ms: MetricComparison
    """The trial's median client-side tool-call latency."""
    agent_ms: MetricComparison
    """The agent's reported duration."""
    turns: MetricComparison
    """The agent's own count of model turns."""
    input_tokens: MetricComparison
    """Every input token the model read, cache traffic included."""
    uncached_input_tokens: MetricComparison
    """Input tokens not read from or written to the cache."""
    cache_creation_input_tokens: MetricComparison
    """Input tokens written to the cache."""
    cache_read_input_tokens: MetricComparison
    """Input tokens read from the cache."""
    output_tokens: MetricComparison
    """Output tokens."""
    total_tokens: MetricComparison
    """`input_tokens + output_tokens`."""
    cost_usd: MetricComparison
    """Cost in USD."""


class Conditional(Record):
    """Metrics over the pairs both arms passed. Conditional on success: not an effect on
    all trials."""

    conditional: Literal["pairs both arms passed"]
    """What the pairs are conditioned on."""
    pairs: int
    """How many pairs both arms passed."""
    metrics: PairMetrics
    """Per metric, over those pairs only."""


class PairHead(Record):
    """Which arms a pair compares, and whether it is tested (the start of a `Pair`)."""

    a: str
    """Arm A: the earlier declared arm."""
    b: str
    """Arm B."""
    declared: bool
    """The experiment declared this comparison (`comparisons`, either order)."""
    test: str
    """`"exact McNemar (two-sided binomial test on discordant pairs), declared before the
    run"`, `"not declared: no test"`, or, for a declared pair in a screening run (no p
    value), `"screening: one campaign pair, no test"`."""


class Pair(PairedSuccess, PairHead):
    """One entry of `pairs`: arm `a` (the earlier declared arm) compared with arm `b` on the
    same trials; every unordered pair of arms in declared order. The success keys are with
    replacements (each trial's final result)."""

    metrics: PairMetrics
    """Per metric, over all pairs."""
    conditional: Conditional
    """Metrics over the pairs both arms passed."""
    without_replacements: PairedSuccess
    """The same success keys over each trial's first attempt (an infra-failed first
    attempt counted as a miss); Holm over the declared comparisons of this family."""
