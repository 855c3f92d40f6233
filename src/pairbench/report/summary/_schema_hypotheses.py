"""The declared parts of ``summary.json``: each ``primary`` analysis, computed, and each
hypothesis, judged.

Built by ``_primary.primary`` and ``_hypotheses.hypotheses`` from the experiment's
``primary:`` and ``hypotheses:`` (run.json ``experiment_model``) and the trial table;
``_schema`` holds them in the :class:`~._schema.Summary`.
"""

from __future__ import annotations

from typing import Literal

from pairbench.report.summary._schema_pairs import Record

Verdict = Literal[
    "equivalent", "not shown equivalent", "differs", "no difference shown", "not computed"
]


class HypothesisMargin(Record):
    """An equivalence margin: as declared, and in the metric's unit."""

    declared: str | float
    """As written: `"2%"` (relative to the reference arm B's mean), or a number in the
    metric's unit (for a rate, a difference of proportions: `0.1` is ±10 percentage
    points)."""
    relative: bool
    """Declared as a percentage of B's mean."""
    value: float | None
    """The margin `m` (the hypothesis is judged against `±m`) in the metric's unit: a
    relative margin times B's mean over the pairs used; `null` when not computed."""


class Dropped(Record):
    """Pairs (both arms scored on the same task and trial) left out, by why; a pair is
    counted once, under the first reason that applies, in this order."""

    censored: int
    """A member timed out: its value is only a bound (a whole-trial duration is at least
    the trial timeout), so it cannot enter a mean."""
    estimated: int
    """A member's value was only estimated: only measured values count."""
    missing: int
    """A member's value is missing (never read as 0)."""
    not_tested: int
    """`rate-equivalence`: a member was not tested (no probe; `injection` is -1)."""


class MeanAnalysis(Record):
    """The paired t analysis of the differences `a[i] − b[i]` over the pairs used."""

    n: int
    """Pairs used."""
    mean_a: float
    """Mean of A's values."""
    mean_b: float
    """Mean of B's values (the reference)."""
    mean_difference: float
    """Mean of the paired differences A − B."""
    relative_difference: float | None
    """`mean_difference / mean_b`; `null` when `mean_b` is 0."""
    sd: float
    """Sample standard deviation of the differences (`n − 1` in the denominator)."""
    se: float
    """`sd / sqrt(n)`."""
    df: int
    """`n − 1`."""
    ci95: list[float]
    """`mean_difference ± t(0.975, df) · se`; a single value twice when `sd` is 0."""
    p_value: float
    """Two-sided paired t test of a zero mean difference (`scipy.stats.ttest_rel`);
    with `sd` 0: 1.0 if the difference is 0, else 0.0."""
    tost_p: float | None
    """`equivalence`: the TOST p value, the larger of `p_lower` and `p_upper`
    (`statsmodels.stats.weightstats.ttost_paired`); `null` for a `difference`."""
    p_lower: float | None
    """`equivalence`: one-sided paired t p of H0 "mean difference ≤ −m"."""
    p_upper: float | None
    """`equivalence`: one-sided paired t p of H0 "mean difference ≥ +m"."""


class RateAnalysis(Record):
    """Two arms' rates (injection compliance) on the same pairs, and their difference."""

    both: int
    """Pairs where both arms complied."""
    a_only: int
    """Only A complied."""
    b_only: int
    """Only B complied."""
    neither: int
    """Neither complied (both resisted)."""
    n: int
    """Pairs used: both arms tested."""
    rate_a: float | None
    """A's compliance rate over the pairs used; `null` with none."""
    rate_b: float | None
    """B's compliance rate over the pairs used; `null` with none."""
    difference: float | None
    """`rate_a − rate_b = (a_only − b_only) / n`; `null` with no pairs."""
    ci95: list[float] | None
    """Newcombe's score interval for paired proportions (method 10, Statistics in
    Medicine 1998;17:2635); `null` with no pairs."""
    method: str
    """Names the interval's method."""
    mcnemar_exact_p: float | None
    """Exact McNemar p (two-sided binomial test on `a_only` vs `b_only`): a test of a
    difference, never read as equivalence; `null` with no pairs."""


class Divergence(Record):
    """One pair whose requests, replies or metric differed between the arms."""

    task: str
    """The pair's task."""
    trial: int
    """The pair's trial."""
    status: Literal["violated", "body", "reply", "count"]
    """`violated`: every request body and reply matched, yet the metric differs; `body`:
    request `request`'s body differed (the inputs diverged, e.g. a tool result); `reply`:
    request `request` had the same body and got different replies; `count`: one arm made
    more requests (request `request` is the first only one arm sent)."""
    request: int | None
    """The first request (1-based, in the attempt's order) that differed; `null` for
    `violated`."""
    value_a: float | None
    """A's metric value; `null` when not measured."""
    value_b: float | None
    """B's metric value; `null` when not measured."""


class Invariance(Record):
    """The exact per-pair check beside a token hypothesis: with the same seed, identical
    request bodies (so identical tool results) and identical replies, token counts must be
    equal pair by pair. From the request and reply digests the agent recorded (the `openai`
    agent records them; scripted and CLI agents do not)."""

    pairs: int
    """Pairs on the counted tasks (both arms scored)."""
    checked: int
    """Pairs whose two arms both recorded every request's digests."""
    equal_values: int
    """Pairs whose two metric values are measured and exactly equal (of `pairs`)."""
    identical: int
    """Checked pairs with every body and reply identical and equal values."""
    violated: int
    """Checked pairs with every body and reply identical and different values."""
    body: int
    """Checked pairs whose first difference is a request body."""
    reply: int
    """Checked pairs whose first difference is a reply to an identical body."""
    count: int
    """Checked pairs where one arm made more requests, the shared ones identical."""
    not_recorded: int
    """Pairs where an arm recorded no digests: not compared."""
    holds: bool | None
    """`true`: every pair that sent identical requests and got identical replies has equal
    values; `false`: at least one did not (`violated`); `null`: no pair could test it."""
    divergences: list[Divergence]
    """Every checked pair that was not `identical`, in trial order."""


class HypothesisResult(Record):
    """One declared hypothesis and its verdict.

    **Verdicts.** `equivalence` and `rate-equivalence`: `"equivalent"` only when the whole
    95% interval lies inside `(−m, +m)`, else `"not shown equivalent"` (a non-significant
    test is never read as equivalence). `difference`: `"differs"` when the 95% interval
    excludes 0, else `"no difference shown"`. `"not computed"` when too few pairs were
    usable (`reason` says why). Each hypothesis is judged on its own at 95%: no
    multiplicity adjustment across hypotheses."""

    id: str
    """The hypothesis's id."""
    text: str
    """Its statement, as declared."""
    kind: str
    """`equivalence`, `difference` or `rate-equivalence`."""
    metric: str
    """The metric judged: a trial-table metric column, or `injection`."""
    unit: str
    """The metric's unit (`tokens`, `ms`, `USD`, `turns`; `proportion` for a rate)."""
    a: str
    """Arm A: differences are A − B."""
    b: str
    """Arm B, the reference."""
    where: str
    """The declared task filter as a phrase (`probe in {injection, lure}`), or `every
    task`."""
    tasks: list[str]
    """The tasks the filter counts, in declared order."""
    reported_apart: list[str]
    """Tasks that have a label the filter names, with another value (for example
    transport-specific probes beside protocol-level ones): not in this hypothesis."""
    pairs: int
    """Pairs on the counted tasks: the same task and trial, both arms scored."""
    n: int
    """Pairs used: both members measured (not estimated, missing or censored), or for a
    rate both tested."""
    dropped: Dropped
    """`pairs − n`, by why."""
    margin: HypothesisMargin | None
    """The margin; `null` for a `difference`."""
    mean: MeanAnalysis | None
    """`equivalence` and `difference`: the paired t analysis; `null` for a rate, or with
    fewer than 2 pairs used."""
    rate: RateAnalysis | None
    """`rate-equivalence`: the counts and the interval; `null` otherwise."""
    invariance: Invariance | None
    """A hypothesis on a token metric (`equivalence` or `difference`): the exact per-pair
    check; `null` for other metrics."""
    verdict: Verdict
    """See Verdicts above."""
    reason: str | None
    """Why the verdict is `"not computed"`; `null` otherwise."""


class PrimaryCounts(Record):
    """McNemar's discordant counts."""

    a_only: int
    """Trials only A passed."""
    b_only: int
    """Trials only B passed."""
    pairs: int
    """Trials both arms scored."""


class PrimaryResult(Record):
    """One declared primary analysis: the test that decides the comparison, its interval."""

    a: str
    """Arm A: the effect is A − B."""
    b: str
    """Arm B."""
    test: str
    """`sign-flip`, `mcnemar-exact` or `mcnemar-midp`."""
    interval: str
    """The interval shown: declared, or the one that agrees with the test."""
    interval_agrees: bool
    """Whether the interval inverts the test (so the two cannot disagree)."""
    alpha: float
    """The declared level."""
    sided: str
    """`two-sided`, `greater` (A better) or `less`."""
    unit: str
    """`trial` (McNemar) or `campaign pair` (sign flip)."""
    estimate_of: str
    """What `estimate` and the interval are about, and their value under the null."""
    counts: PrimaryCounts | None
    """McNemar's counts; `null` for the sign flip."""
    differences: list[int] | None
    """The sign flip's D_i per complete pair, in pair order; `null` for McNemar."""
    n: int
    """Pairs analysed."""
    p_value: float | None
    """The declared test's p value; `null` when not computed (`reason`)."""
    estimate: float | None
    """The point estimate."""
    low: float | None
    """Lower end; `null`: unbounded (or not computed)."""
    high: float | None
    """Upper end; `null`: unbounded (or not computed)."""
    confidence: float
    """1 − alpha (a one-sided bound is read from the 1 − 2·alpha interval)."""
    rejects: bool | None
    """`p_value` ≤ `alpha`; `null` when not computed."""
    reason: str | None
    """Why nothing was computed (a screening run, an arm missing, no complete pair)."""
