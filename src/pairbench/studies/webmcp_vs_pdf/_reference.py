"""Reference answers in the protocol's exact JSON shape, computed by the engine."""

from __future__ import annotations

from typing import Any, Literal

from pairbench.studies.webmcp_vs_pdf._dataset import Record, load_dataset
from pairbench.studies.webmcp_vs_pdf._engine import (
    RandomEffectsFit,
    egger_test,
    fit_random_effects,
)

RuleOutcome = Literal["passed", "failed", "inconclusive"]

EXCLUDED_RECORD = "s04"
"""The record the protocol's second task leaves out."""
RULE_PASS_AT = 0.10
RULE_FAIL_BELOW = 0.05


def rule_outcome(egger_p: float) -> RuleOutcome:
    """The registered rule: passed if p >= 0.10, failed if p < 0.05, otherwise inconclusive.

    **Usage**::

        rule_outcome(0.0574)  # 'inconclusive'
    """
    if egger_p >= RULE_PASS_AT:
        return "passed"
    if egger_p < RULE_FAIL_BELOW:
        return "failed"
    return "inconclusive"


def fit_dataset(
    exclude: tuple[str, ...] = (), records: tuple[Record, ...] | None = None
) -> RandomEffectsFit:
    """The REML fit of the study's dataset (records named by their ``record`` column)."""
    rows = load_dataset() if records is None else records
    return fit_random_effects(
        [r.yi for r in rows],
        [r.vi for r in rows],
        exclude=exclude,
        labels=[r.record for r in rows],
    )


def _summary(fit: RandomEffectsFit) -> dict[str, Any]:
    return {
        "k": fit.k,
        "estimate": fit.estimate,
        "ci_lower": fit.ci_lower,
        "ci_upper": fit.ci_upper,
        "p": fit.p,
    }


def reference_answer(records: tuple[Record, ...] | None = None) -> dict[str, Any]:
    """The correct answer to the common prompt, unrounded (the scorer applies tolerances).

    **Usage**::

        ref = reference_answer()
        ref["overall"]["estimate"], ref["bias"]["rule_outcome"]
    """
    rows = load_dataset() if records is None else records
    egger = egger_test([r.yi for r in rows], [r.vi for r in rows], "classic")
    return {
        "overall": _summary(fit_dataset(records=rows)),
        "exclude_s04": {
            **_summary(fit_dataset((EXCLUDED_RECORD,), rows)),
            "excluded": [EXCLUDED_RECORD],
        },
        "bias": {"egger_p": egger.p, "rule_outcome": rule_outcome(egger.p)},
    }
