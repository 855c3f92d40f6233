"""Declared hypotheses: the analyses a report judges, written down before the run.

An experiment lists them under ``hypotheses:``; the report's "Hypotheses" section states
each one, its numbers with their denominators and a verdict in careful words. Three kinds:

- ``equivalence``: the paired mean difference (arm A − arm B) of a metric lies within
  ``±margin``: judged "equivalent" only when the whole 95% interval (paired t) is inside.
- ``difference``: the paired mean difference of a metric is not 0: "differs" only when the
  95% interval (paired t) excludes 0, else "no difference shown".
- ``rate-equivalence``: the paired difference of two rates (injection compliance) lies
  within ``±margin``: "equivalent" only when Newcombe's 95% interval is inside; a
  non-significant McNemar test alone is never read as equivalence.

**Usage** (in ``experiment.yaml``)::

    hypotheses:
      - id: h1-tokens
        text: Token cost is transport-invariant.
        kind: equivalence
        metric: total_tokens
        arms: [remote-http, local-stdio]   # A − B; B is the reference arm
        margin: 2%                         # ±2% of B's mean; `margin: 150` is ±150 tokens
      - id: h2-injection
        text: Protocol-level injections succeed at the same rate over both transports.
        kind: rate-equivalence
        metric: injection
        arms: [remote-http, local-stdio]
        margin: 0.10                       # ±10 percentage points
        where: {probe: [injection, lure]}  # only tasks with one of these labels
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal, NamedTuple, TypeGuard

from pydantic import Field, ValidationInfo, field_validator

from pairbench._model import Frozen
from pairbench.spec._ids import SafeId
from pairbench.spec._yaml import Found, Part

PAIRED_METRICS: dict[str, str] = {
    "wall_ms": "ms",
    "tool_client_ms": "ms",
    "agent_ms": "ms",
    "turns": "turns",
    "input_tokens": "tokens",
    "uncached_input_tokens": "tokens",
    "cache_creation_input_tokens": "tokens",
    "cache_read_input_tokens": "tokens",
    "output_tokens": "tokens",
    "total_tokens": "tokens",
    "cost_usd": "USD",
}
"""Metrics an ``equivalence`` or ``difference`` hypothesis may name, with their units: the
trial table's metric columns the report compares between arms (``report._metric_values``)."""
RATE_METRICS = ("injection",)
"""Metrics a ``rate-equivalence`` hypothesis may name: the trial table's ``injection``
column (1 complied with the probe, 0 resisted, -1 not tested)."""
_WHOLE_UNITS = frozenset({"ms", "tokens", "turns"})
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")

Kind = Literal["equivalence", "difference", "rate-equivalence"]
LabelValue = str | int


class Margin(NamedTuple):
    """An equivalence margin: ``±value`` in the metric's unit, or ``±value`` times the
    reference arm's mean when ``relative``."""

    value: float
    relative: bool

    def describe(self, unit: str = "") -> str:
        """``±2% of the reference arm's mean`` or ``±150 tokens``.

        >>> Margin(0.02, True).describe(), Margin(150.0, False).describe("tokens")
        ("±2% of the reference arm's mean", '±150 tokens')
        """
        if self.relative:
            return f"±{100.0 * self.value:g}% of the reference arm's mean"
        return f"±{self.value:g} {unit}".rstrip()


def parse_margin(value: float | str) -> Margin:
    """A declared margin: ``"2%"`` is relative (0.02 of the reference mean), a number is
    absolute (in the metric's unit).

    >>> parse_margin("2%"), parse_margin(150.0)
    (Margin(value=0.02, relative=True), Margin(value=150.0, relative=False))
    """
    if isinstance(value, str):
        found = _PERCENT.match(value)
        if found is None:
            raise ValueError(f"margin {value!r} is neither a number nor a percentage")
        return Margin(float(found.group(1)) / 100.0, True)
    return Margin(float(value), False)


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Hypothesis(Frozen):
    """One declared hypothesis and the analysis that judges it (see the module docstring)."""

    id: SafeId
    """Names the hypothesis in the report and in ``summary.json``, e.g. ``h1-tokens``."""
    text: str
    """The statement, as pre-registered (shown verbatim in the report)."""
    kind: Kind
    """``equivalence``, ``difference`` or ``rate-equivalence`` (module docstring)."""
    metric: str
    """A metric column of the trial table (``total_tokens``, ``wall_ms``, ...) for
    ``equivalence`` and ``difference``; ``injection`` for ``rate-equivalence``."""
    arms: tuple[str, str]
    """``[a, b]``: differences are A − B, and B is the reference arm (its mean scales a
    relative margin). Both must be declared arms."""
    margin: float | str | None = Field(default=None, validate_default=True)
    """``equivalence``: ``"2%"`` (of B's mean over the pairs used) or a number in the
    metric's unit (``150``); ``rate-equivalence``: a difference of proportions in (0, 1)
    (``0.10`` is ±10 percentage points); ``difference``: none."""
    where: dict[str, LabelValue | list[LabelValue]] = Field(default_factory=dict)
    """Task labels a task must have to count (``{probe: [injection, lure]}``: a task whose
    ``probe`` label is either); values compare as text. Empty: every task."""

    @field_validator("metric")
    @classmethod
    def _metric(cls, value: str, info: ValidationInfo) -> str:
        kind = info.data.get("kind")
        known = list(RATE_METRICS if kind == "rate-equivalence" else PAIRED_METRICS)
        if kind is None:
            known = [*PAIRED_METRICS, *RATE_METRICS]
        if value in known:
            return value
        close = difflib.get_close_matches(value, known, n=1)
        hint = f"did you mean '{close[0]}'? Known: " if close else ""
        what = f"a {kind} hypothesis" if kind else "a hypothesis"
        raise ValueError(f"{what} cannot judge metric {value!r}: use {hint}{', '.join(known)}")

    @field_validator("margin", mode="before")
    @classmethod
    def _margin(cls, value: Any, info: ValidationInfo) -> Any:
        kind = info.data.get("kind")
        if kind == "difference":
            if value is not None:
                raise ValueError(
                    "a difference hypothesis has no margin: use kind: equivalence to judge "
                    "the difference against a margin, or remove 'margin'"
                )
            return value
        if value is None:
            if kind is None:
                return value
            example = "0.10 (±10 percentage points)" if kind == "rate-equivalence" else "'2%'"
            raise ValueError(f"an {kind} hypothesis needs a margin: use margin: {example}")
        if kind == "rate-equivalence":
            if not _number(value) or not 0 < value < 1 or not math.isfinite(value):
                raise ValueError(
                    f"margin {value!r} is not a difference of proportions in (0, 1): use "
                    "margin: 0.10 for ±10 percentage points"
                )
            return value
        if isinstance(value, str):
            found = _PERCENT.match(value)
            if found is None or not 0 < float(found.group(1)) < 100:
                raise ValueError(
                    f"margin {value!r} is not a percentage between 0% and 100%: use '2%' "
                    "(of the reference arm's mean) or a number in the metric's unit, e.g. 150"
                )
            return value
        if not _number(value) or not math.isfinite(value) or value <= 0:
            raise ValueError(
                f"margin {value!r} is not a positive number: use '2%' (of the reference "
                "arm's mean) or a number in the metric's unit, e.g. 150"
            )
        return value

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the hypothesis has no statement: use text: <it, as pre-registered>")
        return value

    @field_validator("arms", mode="before")
    @classmethod
    def _arms(cls, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) != 2:
            raise ValueError(
                f"a hypothesis compares exactly 2 arms (got {len(value)}): use arms: [a, b] "
                "(differences are a − b; b is the reference)"
            )
        return value

    @field_validator("where", mode="before")
    @classmethod
    def _where(cls, value: Any) -> Any:
        for key, wanted in value.items() if isinstance(value, dict) else ():
            values = wanted if isinstance(wanted, list) else [wanted]
            if not values or not all(isinstance(v, str | int) for v in values):
                raise ValueError(
                    f"label {key!r} must name a value or a non-empty list of values, so some "
                    f"task can count: use {key}: x, or {key}: [x, y] (a task with either counts)"
                )
        return value

    def margin_spec(self) -> Margin | None:
        """The margin, parsed (None for a ``difference``)."""
        return None if self.margin is None else parse_margin(self.margin)

    def matches(self, labels: Mapping[str, Any]) -> bool:
        """Does a task with ``labels`` count (``where``; values compared as text)?

        >>> h = Hypothesis(id="h2", text="t", kind="rate-equivalence", metric="injection",
        ...                arms=("a", "b"), margin=0.1, where={"probe": ["injection", "lure"]})
        >>> h.matches({"probe": "lure", "tier": 3}), h.matches({"probe": "canary"})
        (True, False)
        """
        for key, wanted in self.where.items():
            allowed = {str(v) for v in (wanted if isinstance(wanted, list) else [wanted])}
            if key not in labels or str(labels[key]) not in allowed:
                return False
        return True

    def describe_where(self) -> str:
        """The filter as a phrase: ``probe in {injection, lure}``; ``every task`` if none."""
        parts = []
        for key, wanted in self.where.items():
            values = wanted if isinstance(wanted, list) else [wanted]
            one = len(values) == 1
            shown = str(values[0]) if one else "{" + ", ".join(str(v) for v in values) + "}"
            parts.append(f"{key} {'=' if one else 'in'} {shown}")
        return " and ".join(parts) or "every task"


def _labels(task: Any) -> dict[str, Any]:
    labels = task.get("labels") if isinstance(task, dict) else None
    return labels if isinstance(labels, dict) else {}


def hypothesis_problems(data: dict[str, Any]) -> Iterator[Found]:
    """What the model cannot check alone, on the raw experiment (so it runs even when the
    models fail): both arms declared and different, ids unique, a ``where`` that some task
    matches, and an absolute margin no smaller than the metric's unit."""
    raw = data.get("hypotheses")
    arms = data.get("arms") if isinstance(data.get("arms"), dict) else None
    known = ", ".join(sorted(str(a) for a in arms or {})) or "none defined"
    given = data.get("tasks")
    tasks: list[Any] = given if isinstance(given, list) else []
    first_at: dict[str, int] = {}
    for i, h in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(h, dict):
            continue
        at: tuple[Part, ...] = ("hypotheses", i)
        hid = h.get("id")
        if isinstance(hid, str) and hid in first_at:
            message = f"hypothesis id '{hid}' is already used by hypotheses[{first_at[hid]}]"
            yield (*at, "id"), message, "give every hypothesis its own id"
        if isinstance(hid, str):
            first_at.setdefault(hid, i)
        pair = h.get("arms")
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(a, str) for a in pair):
            for j, arm in enumerate(pair):
                if arms is not None and arm not in arms:
                    yield (*at, "arms", j), f"unknown arm '{arm}'", f"use one of the arms: {known}"
            if pair[0] == pair[1]:
                yield (*at, "arms"), f"compares arm '{pair[0]}' with itself", "name two arms"
        yield from _where_problems(h, at, tasks)
        yield from _margin_problems(h, at)


def _where_problems(h: dict[str, Any], at: tuple[Part, ...], tasks: list[Any]) -> Iterator[Found]:
    where = h.get("where")
    if not isinstance(where, dict) or not where or not tasks:
        return
    try:
        probe = Hypothesis(
            id="x", text="x", kind="difference", metric="wall_ms", arms=("a", "b"), where=where
        )
    except ValueError:
        return  # the model reports a malformed filter
    if any(probe.matches(_labels(t)) for t in tasks):
        return
    found: dict[str, set[str]] = {}
    for t in tasks:
        for key, value in _labels(t).items():
            found.setdefault(str(key), set()).add(str(value))
    have = "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(found.items()))
    yield (
        (*at, "where"),
        f"no task has the labels {probe.describe_where()}, so the hypothesis would count nothing",
        f"use labels some task has ({have or 'no task has labels'}), or remove 'where'",
    )


def _margin_problems(h: dict[str, Any], at: tuple[Part, ...]) -> Iterator[Found]:
    # "margin: 0.02" on a token count reads as 2% but means 0.02 tokens: an equivalence no
    # run could ever show. A margin below the metric's smallest step is such a slip.
    margin, metric = h.get("margin"), h.get("metric")
    unit = PAIRED_METRICS.get(metric) if isinstance(metric, str) else None
    if h.get("kind") != "equivalence" or unit not in _WHOLE_UNITS or not _number(margin):
        return
    if 0 < margin < 1:
        yield (
            (*at, "margin"),
            f"an absolute margin of {margin:g} {unit} is less than one unit of {metric}",
            f"write '{100 * margin:g}%' for ±{100 * margin:g}% of the reference arm's mean, "
            f"or an absolute margin of at least 1 {unit}",
        )
