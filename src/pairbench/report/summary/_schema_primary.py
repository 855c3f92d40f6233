"""The ``primary`` part of ``summary.json`` (built by ``_primary.primary``)."""

from __future__ import annotations

from pairbench.report.summary._schema_pairs import Record


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
