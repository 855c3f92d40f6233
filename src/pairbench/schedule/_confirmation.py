"""Confirmation plans: N paired campaigns, their balanced order, and what they will cost.

After one screening pair, a confirmation run is proposed as a plan: how many pairs, the
order of the two campaigns within each pair (balanced and randomized before anything
runs), the scenario order both arms keep, the smallest p value the plan can reach and a
wall-time estimate. A person approves the plan's hash (``_approval``) before it may run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from pydantic import AwareDatetime, Field

from pairbench._model import Frozen
from pairbench.spec._canonical import canonical_json

if TYPE_CHECKING:
    import numpy as np

DEFAULT_ARMS = ("baseline", "candidate")
SHA256_HEX = r"^[0-9a-f]{64}$"


def _confirmation_rng(experiment: str, run_seed: int) -> np.random.Generator:
    import numpy as np  # only plans need it; keeps start-up light

    digest = hashlib.sha256(f"{experiment}|confirmation|{run_seed}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def confirmation_order(
    n_pairs: int,
    seed: int,
    *,
    experiment: str,
    arms: Sequence[str] = DEFAULT_ARMS,
) -> list[list[str]]:
    """The order of the two arms' campaigns in each of ``n_pairs`` pairs, balanced.

    ``n_pairs // 2`` pairs start with each arm; for odd ``n_pairs`` the extra pair's
    first arm is a seeded coin. The pairs' positions are then permuted. Derivation
    (fixed, so a plan reproduces on any machine and version)::

        g = numpy.random.default_rng(
            int.from_bytes(sha256(f"{experiment}|confirmation|{seed}").digest()[:8], "big"))
        firsts = [arms[0]] * (n // 2) + [arms[1]] * (n // 2)
        if n is odd: firsts.append(arms[g.integers(2)])     # the coin, drawn first
        firsts = [firsts[i] for i in g.permutation(n)]      # then the positions
        order[k] = [firsts[k], the other arm]

    Example::

        >>> confirmation_order(2, 7, experiment="runtime-revision-ab")
        [['baseline', 'candidate'], ['candidate', 'baseline']]
        >>> [pair[0] for pair in confirmation_order(5, 7, experiment="runtime-revision-ab")]
        ['candidate', 'candidate', 'baseline', 'candidate', 'baseline']

    Raises:
        ValueError: ``n_pairs`` below 1, or ``arms`` not two distinct names.
    """
    if isinstance(n_pairs, bool) or n_pairs < 1:
        raise ValueError(f"a confirmation plan needs at least 1 pair, got {n_pairs!r}")
    first, second = _two_arms(arms)
    rng = _confirmation_rng(experiment, seed)
    firsts = [first] * (n_pairs // 2) + [second] * (n_pairs // 2)
    if n_pairs % 2:
        firsts.append((first, second)[int(rng.integers(2))])
    firsts = [firsts[int(i)] for i in rng.permutation(n_pairs)]
    return [[lead, second if lead == first else first] for lead in firsts]


def _two_arms(arms: Sequence[str]) -> tuple[str, str]:
    if isinstance(arms, str) or len(arms) != 2 or arms[0] == arms[1]:
        raise ValueError(f"a campaign comparison needs two distinct arms, got {arms!r}")
    return arms[0], arms[1]


class WallTime(Frozen):
    """How long the confirmation run should take, from screening, and at most.

    The fields after ``upper_bound_s`` came later: a plan made before them has them
    ``None``, and ``plan_sha256`` leaves a ``None`` one out, so its hash is unchanged.
    """

    screening_campaign_s: float = Field(ge=0)
    """Wall seconds of one screening campaign's attempts (the mean over the two arms)."""
    trial_timeout_s: float = Field(gt=0)
    """The experiment's per-scenario time limit."""
    scenarios: int = Field(ge=1)
    """Scenarios in one campaign."""
    estimate_s: float = Field(ge=0)
    """``(screening_campaign_s + overhead_campaign_s) × 2 arms × n_pairs``."""
    upper_bound_s: float = Field(gt=0)
    """``trial_timeout_s × scenarios × 2 arms × n_pairs``: every scenario at its limit."""
    overhead_campaign_s: float | None = Field(default=None, ge=0)
    """Per campaign, the screening run's wall time spent outside its attempts (checkouts,
    builds, proofs, grading), shared over its two campaigns."""
    low_s: float | None = Field(default=None, ge=0)
    """Every campaign as fast as the faster arm was on each scenario in screening (plus the
    overhead), ``× 2 × n_pairs``: the observed spread's low end."""
    high_s: float | None = Field(default=None, ge=0)
    """Every campaign as slow as the slower arm was on each scenario: the high end."""
    budget_s: float | None = Field(default=None, gt=0)
    """A declared wall-time budget for the confirmation run (``plan --wall-budget``)."""
    pairs_in_budget: int | None = Field(default=None, ge=0)
    """The most pairs whose high end fits ``budget_s``."""


class Approval(Frozen):
    """Who approved a plan, when, and the plan hash they approved."""

    by: str = Field(min_length=1, pattern=r"\S")
    """The approver's name, as given to ``pairbench approve --by``."""
    at: AwareDatetime
    """When the approval was recorded (timezone-aware)."""
    plan_sha256: str = Field(pattern=SHA256_HEX)
    """``plan_sha256`` of the plan as approved; any later edit no longer matches it."""


class ConfirmationPlan(Frozen):
    """A proposed confirmation run: written before the first attempt, approved by hash."""

    experiment: str = Field(min_length=1)
    """The experiment's id."""
    protocol_hash: str = Field(pattern=SHA256_HEX)
    """The frozen protocol's hash (the lock's canonical hash) the plan is for."""
    screening_run: str = Field(min_length=1)
    """The run ID of the screening pair the estimates come from."""
    stage: Literal["confirmation"] = "confirmation"
    """Always ``confirmation``: a separate run from screening, reported separately."""
    arms: list[str] = Field(min_length=2, max_length=2)
    """The two arms compared, baseline first."""
    n_pairs: int = Field(ge=1)
    """Complete paired campaigns, declared before any runs (never chosen by results)."""
    run_seed: int = Field(ge=0)
    """The confirmation run's seed: pair seeds and ``order`` derive from it."""
    order: list[list[str]]
    """Per pair, the arms in the order their campaigns run (``confirmation_order``)."""
    scenarios: list[str] = Field(min_length=1)
    """Task ids in the order every campaign runs them: one list, identical for both arms."""
    smallest_attainable_p: float = Field(gt=0, le=1)
    """``2 / 2**n_pairs``: the exact sign-flip test cannot go lower (5 pairs: 0.0625)."""
    wall_time: WallTime
    """The run's expected and worst-case wall time."""
    created_at: AwareDatetime
    """When the plan was made (timezone-aware)."""
    approval: Approval | None = None
    """None until ``pairbench approve`` records it; not part of ``plan_sha256``."""


def build_confirmation_plan(
    *,
    experiment: str,
    protocol_hash: str,
    screening_run: str,
    n_pairs: int,
    run_seed: int,
    scenarios: Sequence[str],
    screening_campaign_s: float,
    trial_timeout_s: float,
    arms: Sequence[str] = DEFAULT_ARMS,
    created_at: datetime | None = None,
    overhead_campaign_s: float | None = None,
    scenario_s: Mapping[str, Sequence[float]] | None = None,
    budget_s: float | None = None,
) -> ConfirmationPlan:
    """Plan ``n_pairs`` paired campaigns: order, p floor and wall time, unapproved.

    **Usage**::

        plan = build_confirmation_plan(
            experiment="runtime-revision-ab", protocol_hash=lock_hash,
            screening_run="rra-20261129T150000Z-1a2b3c", n_pairs=6, run_seed=11,
            scenarios=[f"AR-{i:03d}" for i in range(1, 11)],
            screening_campaign_s=540.0, trial_timeout_s=300.0,
        )
        plan.smallest_attainable_p, plan.wall_time.estimate_s   # (0.03125, 6480.0)

    Raises:
        ValueError: ``n_pairs`` below 1, ``arms`` not two distinct names, or a scenario
            listed twice; pydantic's ``ValidationError`` for any other invalid field.
    """
    from pairbench.analysis import smallest_attainable_p  # on use: `import pairbench` stays light

    first, second = _two_arms(arms)
    if len(set(scenarios)) != len(scenarios):
        raise ValueError(f"each scenario runs once per campaign; listed twice in {scenarios!r}")
    n_arms = 2
    campaigns = n_arms * n_pairs
    overhead = overhead_campaign_s or 0.0
    low = high = None
    if scenario_s:
        seen = [list(v) for v in scenario_s.values() if len(v)]
        low = round((sum(min(v) for v in seen) + overhead) * campaigns, 3)
        high = round((sum(max(v) for v in seen) + overhead) * campaigns, 3)
    fits = None
    if budget_s is not None:
        per_pair = high if high is not None else (screening_campaign_s + overhead) * campaigns
        per_pair /= n_pairs
        fits = int(budget_s // per_pair) if per_pair > 0 else None
    return ConfirmationPlan(
        experiment=experiment,
        protocol_hash=protocol_hash,
        screening_run=screening_run,
        arms=[first, second],
        n_pairs=n_pairs,
        run_seed=run_seed,
        order=confirmation_order(n_pairs, run_seed, experiment=experiment, arms=arms),
        scenarios=list(scenarios),
        smallest_attainable_p=smallest_attainable_p(n_pairs),
        wall_time=WallTime(
            screening_campaign_s=screening_campaign_s,
            trial_timeout_s=trial_timeout_s,
            scenarios=len(scenarios),
            estimate_s=round((screening_campaign_s + overhead) * campaigns, 3),
            upper_bound_s=trial_timeout_s * len(scenarios) * campaigns,
            overhead_campaign_s=overhead_campaign_s,
            low_s=low,
            high_s=high,
            budget_s=budget_s,
            pairs_in_budget=fits,
        ),
        created_at=created_at or datetime.now(UTC),
    )


def plan_sha256(plan: ConfirmationPlan) -> str:
    """SHA-256 of the plan's canonical JSON without its approval.

    Canonical JSON as ``spec.canonical_json``: ``model_dump(mode="json")`` minus
    ``approval``, keys sorted at every level, no whitespace, UTF-8. Recording an
    approval leaves the hash unchanged; editing any other field changes it.

    **Usage**::

        plan_sha256(plan) == plan.approval.plan_sha256   # the approved plan, unedited
    """
    data = plan.model_dump(mode="json", exclude={"approval"})
    # Fields added to WallTime later are left out while None: an older plan keeps its hash.
    wall = data["wall_time"]
    for name in _LATER_WALL_FIELDS:
        if wall.get(name) is None:
            wall.pop(name, None)
    return hashlib.sha256(canonical_json(data)).hexdigest()


_LATER_WALL_FIELDS = ("overhead_campaign_s", "low_s", "high_s", "budget_s", "pairs_in_budget")


def plan_problems(plan: ConfirmationPlan) -> list[str]:
    """What makes a plan inconsistent: an order that does not match its pairs or arms.

    Empty for every plan ``build_confirmation_plan`` makes.

    **Usage**::

        assert not plan_problems(plan)
    """
    from pairbench.analysis import smallest_attainable_p  # on use: `import pairbench` stays light

    problems: list[str] = []
    if len(set(plan.arms)) != 2:
        problems.append(f"arms must be two distinct names, got {plan.arms!r}")
    if len(plan.order) != plan.n_pairs:
        problems.append(f"order lists {len(plan.order)} pairs but n_pairs is {plan.n_pairs}")
    for k, pair in enumerate(plan.order):
        if sorted(pair) != sorted(plan.arms):
            problems.append(f"order[{k}] is {pair!r}, not the arms {plan.arms!r} once each")
    if not problems:
        # Balanced: the arms lead equally often, or one more for odd n_pairs (the coin).
        leads = [pair[0] for pair in plan.order].count(plan.arms[0])
        if abs(2 * leads - plan.n_pairs) > 1:
            problems.append(
                f"order is unbalanced: {plan.arms[0]} first in {leads} of {plan.n_pairs} pairs"
            )
    if plan.smallest_attainable_p != smallest_attainable_p(plan.n_pairs):
        problems.append("smallest_attainable_p does not match n_pairs")
    if plan.wall_time.scenarios != len(plan.scenarios):
        problems.append("wall_time.scenarios does not match scenarios")
    return problems
