"""What the experiment declares a demonstrated regression to be (``agent.settings.regression``).

The protocol keeps demonstrated regressions a release gate whatever the aggregate; the
experiment says, before any run, how many pairs make one. The default is the protocol's:
the candidate failed a scenario in at least two pairs where the baseline passed it, and
never the reverse (no pair where the candidate passed it and the baseline failed it).
It lives in the ``rab-runtime`` adapter's settings (the study's own place in the
experiment), so ``pairbench check`` names a bad value with its line, a run refuses it, and
the lock hashes it with the rest of the experiment.

**Usage**::

    agent:
      adapter: rab-runtime
      settings: {command: [...], regression: {min_pairs: 3, allow_reverse: false}}

    rule = declared_rule(run.experiment_model)   # RegressionRule(min_pairs=3, ...)
    rule.holds(worse=3, better=0)                # True
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import Field
from pydantic_core import PydanticCustomError

from pairbench._errors import PairbenchError
from pairbench._model import Frozen

EXAMPLE = "regression: {min_pairs: 2, allow_reverse: false}"
"""A valid declaration, shown in every fix."""


class RegressionRule(Frozen):
    """When a candidate's failures on one scenario are a demonstrated regression."""

    min_pairs: int = Field(default=2, ge=1)
    """Pairs in which the baseline passed the scenario and the candidate failed it (a scored
    failure or a pre-inference rejection; infrastructure and missing cells count in neither
    direction) needed to call it a regression."""
    allow_reverse: bool = False
    """False (the protocol's): a single pair in which the candidate passed the scenario and
    the baseline failed it means no demonstrated regression. True: such pairs are ignored."""

    def holds(self, worse: int, better: int) -> bool:
        """A regression? ``worse``: pairs the baseline passed and the candidate failed;
        ``better``: the reverse."""
        return worse >= self.min_pairs and (self.allow_reverse or better == 0)

    def describe(self, baseline: str = "baseline", candidate: str = "candidate") -> str:
        """The rule in words, as the report's gates section shows it."""
        reverse = (
            f"pairs where the {candidate} passed and the {baseline} failed are ignored"
            if self.allow_reverse
            else "never the reverse"
        )
        pairs = "pair" if self.min_pairs == 1 else "pairs"
        return (
            f"the {candidate} fails a scenario in at least {self.min_pairs} {pairs} where the "
            f"{baseline} passed it, and {reverse}"
        )


class _Problem(NamedTuple):
    field: str
    message: str


def _problem(raw: Any) -> _Problem | None:
    """What is wrong with a raw declaration, naming its field; None: nothing."""
    if not isinstance(raw, Mapping):
        return _Problem("", f"must be a mapping, not {raw!r}")
    allowed = sorted(RegressionRule.model_fields)
    for key in raw:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return _Problem(str(key), f"is not a key{hint}; allowed: {', '.join(allowed)}")
    pairs = raw.get("min_pairs", 2)
    # bool is an int in Python: `min_pairs: true` must not read as 1.
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1:
        return _Problem("min_pairs", f"must be a whole number of pairs, 1 or more, not {pairs!r}")
    reverse = raw.get("allow_reverse", False)
    if not isinstance(reverse, bool):
        return _Problem("allow_reverse", f"must be true or false, not {reverse!r}")
    return None


def parse_rule(raw: Any) -> RegressionRule:
    """The declared rule; ``None`` is the default.

    Raises:
        PydanticCustomError: a bad declaration, naming the field and the fix (the adapter
            settings' validator turns it into ``pairbench check``'s problem at its line).
    """
    if raw is None:
        return RegressionRule()
    if isinstance(raw, RegressionRule):
        return raw
    found = _problem(raw)
    if found is not None:
        raise PydanticCustomError(
            "regression",
            "{field}{message} (e.g. {example})",
            {
                "field": f"{found.field} " if found.field else "",
                "message": found.message,
                "example": EXAMPLE,
            },
        )
    return RegressionRule.model_validate(dict(raw))


def declared_rule(experiment_model: Mapping[str, Any] | None) -> RegressionRule:
    """The rule the run's experiment declared (run.json ``experiment_model.agent.settings
    .regression``), else the default.

    Raises:
        PairbenchError: the recorded declaration is not valid (run.json was edited: the
            experiment's own was checked before the run).
    """
    agent = (experiment_model or {}).get("agent")
    settings = agent.get("settings") if isinstance(agent, Mapping) else None
    raw = settings.get("regression") if isinstance(settings, Mapping) else None
    try:
        return parse_rule(raw)
    except PydanticCustomError as exc:
        raise PairbenchError(
            f"run.json experiment_model.agent.settings.regression: {exc.message()}. Fix: "
            "restore run.json (the experiment's declaration is checked before a run, so "
            "run.json was changed since)"
        ) from None


def is_declared(experiment_model: Mapping[str, Any] | None) -> bool:
    """Whether the experiment wrote a declaration (else the default applies)."""
    agent = (experiment_model or {}).get("agent")
    settings = agent.get("settings") if isinstance(agent, Mapping) else None
    return isinstance(settings, Mapping) and settings.get("regression") is not None
