"""The models of ``summary.json``'s scored-study and spread parts: per-field accuracy, the
reasons trials failed, and the latency spread the plots draw (see ``_schema``)."""

from __future__ import annotations

from pairbench.report.summary._schema_pairs import ArmName, Proportion, Record, TaskName, TrialIndex


class FieldAccuracy(Record):
    """One scored field: correct / scored per arm. A trial enters a field's denominator
    only when its grade scored that field (a parse failure scores none: it is not a zero)."""

    field: str
    """The field's path as the grader names it (`details.fields[].path`)."""
    arms: dict[str, Proportion]
    """Per arm: trials with the field correct, of its scored trials that scored it."""


class TrialRef(Record):
    """One trial, by arm, task and trial index."""

    arm: ArmName
    task: TaskName
    trial: TrialIndex


class FailureGroup(Record):
    """Final trials scored and not passed that share an outcome and a reason. The reason is
    agent or grader text, stored as given; renderers escape it."""

    outcome: str
    """failed, parse_failure, agent_error, timeout or a limit reached (output_limit,
    memory_limit, disk_limit, process_limit)."""
    reason: str
    """The recorded reason (empty when none was recorded)."""
    trials: int
    """Trials in the group, every arm."""
    arms: dict[str, int]
    """Trials per arm (arms with none left out)."""
    examples: list[TrialRef]
    """Up to 10 of its trials, in report order."""


class SpreadPoints(Record):
    """The quantiles of a set of values."""

    n: int
    """Values."""
    quantiles: list[float] | None
    """At 0, 0.05, 0.25, 0.5, 0.75, 0.95 and 1 (linear interpolation, R's type 7); `null`
    when `n == 0`."""


class ArmSpread(SpreadPoints):
    """One arm's measured values over its scored final trials."""

    arm: ArmName
    censored: int
    """Timed-out trials left out (their duration is only a lower bound)."""


class PairSpread(SpreadPoints):
    """One pair's paired differences (A minus B) over trials both arms measured."""

    a: str
    """Arm A."""
    b: str
    """Arm B."""


class Spread(Record):
    """How one duration spreads over trials: what the latency plot draws."""

    metric: str
    """The metric (`wall_ms`)."""
    unit: str
    """Its unit."""
    arms: list[ArmSpread]
    """Per arm."""
    pairs: list[PairSpread]
    """Per unordered pair of arms, in declared order."""
