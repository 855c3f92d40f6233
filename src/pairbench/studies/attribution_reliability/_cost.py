"""The protocol's cost projection (§12): expected and worst-case spend of the held-out run,
from the calibration run's per-session costs and the session counts the schedule implies.

expected = Σ count × mean per session kind (product-failure end-to-end, other end-to-end,
package); worst = every end-to-end session at the calibration's end-to-end maximum and every
package at twice the package maximum. ``plan`` refuses when calibration + worst passes the
ceiling, a held-out run refuses to start on the same projection (``_spend.before_run``), and
the run reserves each session's worst case before it starts (``tasks[].cost_per_trial_usd``),
so it stops, the rest ``not_run``, before it could cross.

**Usage**::

    counts = session_counts(experiment, load_cases(), load_packages())   # (16, 44, 20)
    projection = project(PROTOCOL_INPUTS, counts, ceiling_usd=20.0)
    projection.expected_usd, projection.worst_usd   # 4.58, 17.56 (rounded inputs)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import NamedTuple

from pydantic import Field

from pairbench._errors import PairbenchError
from pairbench._model import Frozen
from pairbench.spec._models import Experiment
from pairbench.studies.attribution_reliability._manifest import Case, Package


class SessionCounts(NamedTuple):
    product_e2e: int
    other_e2e: int
    packages: int


class CostInputs(Frozen):
    """Per-session spend from calibration (USD)."""

    product_mean: float = Field(ge=0)
    other_mean: float = Field(ge=0)
    package_mean: float = Field(ge=0)
    e2e_max: float = Field(ge=0)
    package_max: float = Field(ge=0)
    calibration_total: float = Field(ge=0)
    source: str
    """Where the numbers come from (a calibration run, or the protocol's printed values)."""


PROTOCOL_INPUTS = CostInputs(
    product_mean=0.172,
    other_mean=0.032,
    package_mean=0.021,
    e2e_max=0.272,
    package_max=0.031,
    calibration_total=0.97,
    source="the protocol's printed (rounded) calibration figures, §12",
)
PROTOCOL_PRINTED = (4.56, 17.57, 18.54)
"""Expected, worst and worst + calibration as the protocol prints them."""
WHY_THEY_DIFFER = (
    "The protocol prints $4.56 / $17.57 / $18.54; its rounded inputs give $4.58 / $17.56 / "
    "$18.53. It presumably computed from unrounded per-session costs: each printed figure is "
    "rounded to $0.001, so the expected total can move by up to 80 x $0.0005 = $0.04 and the "
    "worst case by up to 100 x $0.0005 = $0.05, which covers both gaps ($0.02 and $0.01)."
)


class CostProjection(Frozen):
    counts: tuple[int, int, int]
    """Product-failure end-to-end, other end-to-end and package sessions."""
    inputs: CostInputs
    expected_usd: float
    worst_usd: float
    calibration_usd: float
    worst_with_calibration_usd: float
    ceiling_usd: float | None
    e2e_worst_per_session: float
    package_worst_per_session: float

    @property
    def within_ceiling(self) -> bool:
        return self.ceiling_usd is None or self.worst_with_calibration_usd <= self.ceiling_usd


def session_counts(
    experiment: Experiment,
    cases: dict[str, Case],
    packages: dict[str, Package],
    case_set: str = "held-out",
) -> SessionCounts:
    """Sessions per kind the schedule runs for ``case_set`` (trials per task included)."""
    product = other = package = 0
    for task in experiment.tasks_in(case_set):
        n = experiment.trials_for(task)
        name = task.id.upper()
        if name in cases:
            if cases[name].case_class == "product_failure":
                product += n
            else:
                other += n
        elif name in packages:
            package += n
    return SessionCounts(product, other, package)


def project(inputs: CostInputs, counts: SessionCounts, ceiling_usd: float | None) -> CostProjection:
    """The projection from ``inputs`` for ``counts`` sessions (exact sums, no rounding)."""
    expected = math.fsum(
        [
            counts.product_e2e * inputs.product_mean,
            counts.other_e2e * inputs.other_mean,
            counts.packages * inputs.package_mean,
        ]
    )
    package_worst = 2 * inputs.package_max
    worst = math.fsum(
        [(counts.product_e2e + counts.other_e2e) * inputs.e2e_max, counts.packages * package_worst]
    )
    return CostProjection(
        counts=(counts.product_e2e, counts.other_e2e, counts.packages),
        inputs=inputs,
        expected_usd=expected,
        worst_usd=worst,
        calibration_usd=inputs.calibration_total,
        worst_with_calibration_usd=worst + inputs.calibration_total,
        ceiling_usd=ceiling_usd,
        e2e_worst_per_session=inputs.e2e_max,
        package_worst_per_session=package_worst,
    )


class _Costs(NamedTuple):
    product: list[float]
    other: list[float]
    package: list[float]
    missing: list[str]
    """Sessions that ran but recorded no cost (``task#trial``)."""


def _session_costs(run_dir: Path, cases: dict[str, Case]) -> _Costs:
    costs = _Costs([], [], [], [])
    for file in sorted((run_dir / "results").rglob("*.json")):
        record = json.loads(file.read_text(encoding="utf-8"))
        if record.get("outcome") == "not_run":
            continue
        try:
            session = json.loads(record.get("final_answer") or "")
        except json.JSONDecodeError:
            session = {}
        if not isinstance(session, dict):
            session = {}
        cost = session.get("cost_usd")
        if cost is None and session.get("cost_provenance") == "not_applicable":
            cost = 0.0  # a model-free engine: nothing was spent, nothing to project
        if cost is None:
            costs.missing.append(f"{record.get('task')}#{record.get('trial')}")
            continue
        if session.get("kind") == "package":
            costs.package.append(float(cost))
        elif cases.get(str(session.get("case"))) is not None and (
            cases[str(session["case"])].case_class == "product_failure"
        ):
            costs.product.append(float(cost))
        else:
            costs.other.append(float(cost))
    return costs


def _inputs(costs: _Costs, source: str) -> CostInputs:
    product, other, package = costs.product, costs.other, costs.package
    return CostInputs(
        product_mean=math.fsum(product) / len(product),
        other_mean=math.fsum(other) / len(other),
        package_mean=math.fsum(package) / len(package),
        e2e_max=max([*product, *other]),
        package_max=max(package),
        calibration_total=math.fsum([*product, *other, *package]),
        source=source,
    )


def inputs_from_run(run_dir: Path, cases: dict[str, Case]) -> CostInputs:
    """Per-session spend of a calibration run (its sessions' recorded costs, unrounded).

    A session of a model-free engine (``cost_provenance`` ``not_applicable``: it declares no
    model and reported no usage) costs $0. Raises ``PairbenchError`` when a session recorded
    no cost at all: a projection from part of the spend would understate it.
    """
    costs = _session_costs(run_dir, cases)
    missing = costs.missing
    if missing:
        raise PairbenchError(
            f"{run_dir}: {len(missing)} session(s) recorded no cost ({', '.join(missing[:5])}"
            f"{', ...' if len(missing) > 5 else ''}). Fix: project from a calibration run whose "
            "engine reports its cost, or use --protocol-figures for the protocol's own inputs"
        )
    kinds = {
        "product-failure end-to-end": costs.product,
        "other end-to-end": costs.other,
        "package": costs.package,
    }
    empty = [name for name, values in kinds.items() if not values]
    if empty:
        raise PairbenchError(
            f"{run_dir}: no {', '.join(empty)} session has a cost. Fix: run the whole "
            "calibration set before projecting"
        )
    return _inputs(costs, f"calibration run {run_dir.name}")


def partial_inputs(run_dir: Path, cases: dict[str, Case]) -> CostInputs | None:
    """``inputs_from_run`` for a calibration run that stopped part-way (a budget stop): a
    kind with no costed session takes the mean and maximum of every costed session, so a
    dear engine stopped before its packages still projects dear packages. Sessions with no
    cost are left out. None when no session has a cost."""
    costs = _session_costs(run_dir, cases)
    seen = [*costs.product, *costs.other, *costs.package]
    if not seen:
        return None
    filled = _Costs(
        costs.product or seen, costs.other or seen, costs.package or seen, costs.missing
    )
    inputs = _inputs(filled, f"calibration run {run_dir.name}")
    # The calibration's own spend is what it recorded, not the stand-ins above.
    return inputs.model_copy(update={"calibration_total": math.fsum(seen)})


def projection_lines(p: CostProjection) -> list[str]:
    """The projection as the ``plan`` command prints it."""
    product, other, packages = p.counts
    lines = [
        f"inputs: {p.inputs.source}",
        f"sessions: {product} product-failure end-to-end, {other} other end-to-end, "
        f"{packages} packages",
        f"expected: ${p.expected_usd:.2f}  (= {product} x {p.inputs.product_mean:g} + "
        f"{other} x {p.inputs.other_mean:g} + {packages} x {p.inputs.package_mean:g})",
        f"worst case: ${p.worst_usd:.2f}  (every end-to-end session at "
        f"${p.e2e_worst_per_session:g}, every package at 2 x ${p.inputs.package_max:g})",
        f"with calibration's ${p.calibration_usd:.2f}: ${p.worst_with_calibration_usd:.2f}",
    ]
    if p.ceiling_usd is not None:
        verdict = "inside" if p.within_ceiling else "OVER"
        lines.append(f"ceiling: ${p.ceiling_usd:.2f} ({verdict})")
    if p.inputs == PROTOCOL_INPUTS:
        lines.append(WHY_THEY_DIFFER)
    return lines
