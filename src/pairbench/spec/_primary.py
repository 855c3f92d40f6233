"""The primary analysis: the test and interval that decide a comparison, declared before
the run.

A report computes many statistics; only one per comparison may decide. ``primary:`` names
it, with its level and direction, so the report can lead with it, labelled primary, beside
an interval that agrees with it (the others follow, labelled as what they are).

**Usage** (in ``experiment.yaml``)::

    primary:
      - arms: [candidate, baseline]   # A − B
        test: sign-flip               # campaign level: D_i per pair (trial index)
        alpha: 0.05
        sided: two-sided              # or greater (A > B), less (A < B)
      - arms: [remote-http, local-stdio]
        test: mcnemar-exact           # trial level: the discordant pairs
        interval: clopper-pearson     # the default for McNemar: it agrees with the test

Tests and the intervals that agree with them (the default), and those allowed beside:

- ``sign-flip``: the exact sign-flip test of the mean campaign difference over all 2^N
  assignments; interval ``sign-flip`` (inverting the test), or ``t`` (the one-sample t
  interval, which may disagree with the test).
- ``mcnemar-exact``: the exact binomial test on the discordant pairs; interval
  ``clopper-pearson`` (of the share of discordant pairs A won; excludes 1/2 exactly when
  the test rejects), or ``newcombe`` (the difference of success rates, which may disagree).
- ``mcnemar-midp``: the mid-p version of it (less conservative); interval ``mid-p`` (the
  mid-p inversion, which agrees with it), or ``newcombe``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field, model_validator

from pairbench._model import Frozen
from pairbench.spec._yaml import Found, Part

Test = Literal["sign-flip", "mcnemar-exact", "mcnemar-midp"]
Interval = Literal["sign-flip", "t", "clopper-pearson", "mid-p", "newcombe"]
Sided = Literal["two-sided", "greater", "less"]

AGREEING: dict[str, str] = {
    "sign-flip": "sign-flip",
    "mcnemar-exact": "clopper-pearson",
    "mcnemar-midp": "mid-p",
}
"""Each test's interval that agrees with it: the default."""
ALLOWED: dict[str, tuple[str, ...]] = {
    "sign-flip": ("sign-flip", "t"),
    "mcnemar-exact": ("clopper-pearson", "newcombe"),
    "mcnemar-midp": ("mid-p", "newcombe"),
}
"""The intervals each test may be declared with."""


class PrimaryAnalysis(Frozen):
    """One comparison's deciding test (see the module docstring)."""

    arms: tuple[str, str]
    """``[a, b]``: the effect is A − B (for McNemar: A's wins among the discordant pairs)."""
    test: Test
    """``sign-flip`` (campaign level), ``mcnemar-exact`` or ``mcnemar-midp`` (trial level)."""
    interval: Interval | None = None
    """The interval shown with it; default: the one that agrees with the test."""
    alpha: float = Field(default=0.05, gt=0.0, le=0.5, allow_inf_nan=False)
    """The level the test decides at."""
    sided: Sided = "two-sided"
    """``two-sided``, ``greater`` (A better than B) or ``less``; a one-sided interval is a
    bound on that side only."""

    @model_validator(mode="after")
    def _interval_fits(self) -> PrimaryAnalysis:
        if self.interval is not None and self.interval not in ALLOWED[self.test]:
            allowed = " or ".join(ALLOWED[self.test])
            raise ValueError(
                f"interval {self.interval!r} does not go with test {self.test!r}. "
                f"Fix: interval: {allowed} (or leave it out for {AGREEING[self.test]})"
            )
        return self

    @property
    def shown_interval(self) -> str:
        """The declared interval, or the one that agrees with the test."""
        return self.interval or AGREEING[self.test]

    @property
    def agrees(self) -> bool:
        """Whether the interval is the test's own inversion (so they cannot disagree)."""
        return self.shown_interval == AGREEING[self.test]


def primary_problems(data: dict[str, Any]) -> Iterator[Found]:
    """Both arms declared and different, and each comparison declared once."""
    raw = data.get("primary")
    arms = data.get("arms") if isinstance(data.get("arms"), dict) else None
    known = ", ".join(sorted(str(a) for a in arms or {})) or "none defined"
    seen: dict[frozenset[str], int] = {}
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(item, dict):
            continue
        at: tuple[Part, ...] = ("primary", i)
        given = item.get("arms")
        if not isinstance(given, list) or len(given) != 2:
            continue
        pair: list[Any] = given
        if not all(isinstance(a, str) for a in pair):
            continue
        for j, arm in enumerate(pair):
            if arms is not None and arm not in arms:
                yield (*at, "arms", j), f"unknown arm '{arm}'", f"use one of the arms: {known}"
        if pair[0] == pair[1]:
            yield (*at, "arms"), f"compares arm '{pair[0]}' with itself", "name two arms"
        key = frozenset(pair)
        if key in seen:
            yield (
                (*at, "arms"),
                f"{pair[0]} vs {pair[1]} already has a primary analysis (primary[{seen[key]}])",
                "declare one deciding test per comparison; report others beside it",
            )
        seen.setdefault(key, i)
