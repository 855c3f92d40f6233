"""The schedule: every planned attempt, its paired seed, and the arm order within each pair.

With ``order: {block: campaign}`` it also records the campaigns, in the order they run:
one arm's complete run of every task of one trial index, then the other arm's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from pairbench._model import Frozen
from pairbench.schedule._confirmation import confirmation_order
from pairbench.schedule._seeds import derive_seed, model_seed
from pairbench.spec._models import Experiment
from pairbench.spec._task import Task

if TYPE_CHECKING:
    import numpy as np


class TrialKey(Frozen):
    """One (arm, task, trial): the unit that gets exactly one final result."""

    arm: str
    task: str
    trial: int

    @property
    def label(self) -> str:
        return f"{self.arm}/{self.task}/{self.trial}"


class Pair(Frozen):
    """One (task, trial) across all arms, with its seed and the planned arm order."""

    index: int
    task: str
    trial: int
    seed: int
    model_seed: int
    order: list[str]
    """Arms in the order they run within this pair (the first runs first)."""

    def trial_keys(self) -> list[TrialKey]:
        return [TrialKey(arm=arm, task=self.task, trial=self.trial) for arm in self.order]


def campaign_id(run_id: str | None, pair: int, arm: str) -> str:
    """A campaign's id: ``<run-id>-P<k>-<arm>``, always new because the run ID is.

    Without a run ID (a preview, ``pairbench plan``) it is ``P<k>-<arm>``.

    >>> campaign_id("rra-20261129T150000Z-1a2b3c", 0, "baseline")
    'rra-20261129T150000Z-1a2b3c-P0-baseline'
    """
    return f"P{pair}-{arm}" if run_id is None else f"{run_id}-P{pair}-{arm}"


class Campaign(Frozen):
    """One arm's complete, ordered run of every task of one trial index."""

    id: str
    """``<run-id>-P<k>-<arm>`` (``campaign_id``)."""
    pair: int
    """``k``: the trial index every task of the campaign runs (the campaign pair)."""
    arm: str
    """The arm that runs it."""
    tasks: list[str]
    """Task ids in the order they run: declared order, identical for every campaign."""

    def trial_keys(self) -> list[TrialKey]:
        return [TrialKey(arm=self.arm, task=task, trial=self.pair) for task in self.tasks]


class Schedule(Frozen):
    """The whole plan, written to ``run.json`` before the first attempt."""

    experiment: str
    run_seed: int
    order_policy: str
    pairs: list[Pair] = Field(default_factory=list)
    campaigns: list[Campaign] = Field(default_factory=list, exclude_if=lambda v: not v)
    """With ``order: {block: campaign}``: every campaign, in the order they run (empty
    otherwise, and left out of run.json, so other runs' schedules read as before)."""

    def execution(self) -> list[TrialKey]:
        """Every trial in the order it runs, one at a time: campaign after campaign. Empty
        unless the schedule has campaigns (pairs then run concurrently).

        **Usage**::

            [k.label for k in schedule.execution()][:3]
            # ['candidate/AR-001/0', 'candidate/AR-002/0', 'candidate/AR-003/0']
        """
        return [key for campaign in self.campaigns for key in campaign.trial_keys()]

    @property
    def attempts(self) -> int:
        """Planned trials (one final result each)."""
        return sum(len(pair.order) for pair in self.pairs)

    def pair_of(self, key: TrialKey) -> Pair:
        for pair in self.pairs:
            if pair.task == key.task and pair.trial == key.trial:
                return pair
        raise KeyError(key.label)


def _order_rng(experiment: str, run_seed: int) -> np.random.Generator:
    import numpy as np  # only the randomized order needs it; keeps start-up light

    digest = hashlib.sha256(f"{experiment}|{run_seed}|order".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def build_schedule(
    experiment: Experiment,
    run_seed: int,
    case_set: str | None = None,
    *,
    run_id: str | None = None,
    campaign_order: Sequence[Sequence[str]] | None = None,
) -> Schedule:
    """Plan every pair: tasks in declared order, trials 0..n-1, arms ordered per policy.

    ``case_set`` keeps only the tasks of that case set (None: every task).

    ``alternate``: the declared arm order, rotated by one for each successive pair, so each
    arm leads equally often. ``randomized``: a permutation per pair drawn from a generator
    seeded from (experiment, run seed), recorded here so the order is never re-drawn.

    **Usage**::

        s = build_schedule(experiment, run_seed=7)
        s.pairs[0].order, s.pairs[1].order
        # (['baseline', 'local-stdio', 'remote-http'], ['local-stdio', 'remote-http', 'baseline'])

    ``{block: campaign}`` (``campaign_schedule``): one campaign pair per entry of
    ``campaign_order`` (a confirmation plan's order), or without it one screening pair.
    ``run_id`` names the campaigns (``campaign_id``).
    """
    if experiment.campaigns:
        return campaign_schedule(
            experiment, run_seed, case_set, run_id=run_id, campaign_order=campaign_order
        )
    if campaign_order is not None:
        raise ValueError(f"{experiment.id} has no campaign blocks: a campaign order cannot apply")
    arms = list(experiment.arms)
    # Drawn from only for a randomized order: an alternating one needs no numpy at start-up.
    rng = _order_rng(experiment.id, run_seed) if experiment.order != "alternate" else None
    pairs: list[Pair] = []
    for task, trial in _pair_keys(experiment, case_set):
        index = len(pairs)
        if rng is None:
            shift = index % len(arms)
            order = arms[shift:] + arms[:shift]
        else:
            order = [arms[i] for i in rng.permutation(len(arms))]
        seed = derive_seed(experiment.id, run_seed, task.id, trial)
        pairs.append(
            Pair(
                index=index,
                task=task.id,
                trial=trial,
                seed=seed,
                model_seed=model_seed(seed),
                order=order,
            )
        )
    return Schedule(
        experiment=experiment.id,
        run_seed=run_seed,
        order_policy=experiment.order_policy,
        pairs=pairs,
    )


def _pair_keys(experiment: Experiment, case_set: str | None) -> list[tuple[Task, int]]:
    """Every (task, trial) in the experiment's ``pair_order``."""
    tasks = experiment.tasks_in(case_set)
    keys = [(task, trial) for task in tasks for trial in range(experiment.trials_for(task))]
    if experiment.pair_order == "round":
        place = {task.id: i for i, task in enumerate(tasks)}
        keys.sort(key=lambda k: (k[0].phase, k[1], place[k[0].id]))
    return keys


def screening_order(experiment: Experiment, run_seed: int) -> list[str]:
    """The arm order of a screening pair: ``confirmation_order(1, run_seed)``'s one pair.

    That is the plan generator's seeded coin for an odd pair, documented there:
    ``numpy.random.default_rng(int.from_bytes(sha256(f"{experiment}|confirmation|{run_seed}")
    .digest()[:8], "big")).integers(2)`` picks which declared arm runs its campaign first.
    """
    return confirmation_order(1, run_seed, experiment=experiment.id, arms=list(experiment.arms))[0]


def campaign_schedule(
    experiment: Experiment,
    run_seed: int,
    case_set: str | None = None,
    *,
    run_id: str | None = None,
    campaign_order: Sequence[Sequence[str]] | None = None,
) -> Schedule:
    """The schedule of a campaign experiment, its exact execution order recorded.

    Campaign pair ``k`` runs its arms' campaigns in ``campaign_order[k]`` (a plan's order;
    None: one screening pair in ``screening_order``); each campaign runs every task once,
    in declared order, at trial index ``k``. Seeds are the usual paired seeds (the arm is
    not an input), so both campaigns of a pair see the same seeded content.

    **Usage**::

        s = campaign_schedule(experiment, run_seed=7, run_id="rra-...-1a2b3c")
        [c.id for c in s.campaigns]   # ['rra-...-P0-candidate', 'rra-...-P0-baseline']

    Raises:
        ValueError: an entry of ``campaign_order`` is not the arms, each once.
    """
    arms = list(experiment.arms)
    orders = [list(o) for o in campaign_order] if campaign_order is not None else None
    if orders is None:
        orders = [screening_order(experiment, run_seed)]
    for k, order in enumerate(orders):
        if sorted(order) != sorted(arms):
            raise ValueError(f"campaign pair {k}'s order {order!r} is not the arms {arms!r}")
    tasks = [task.id for task in experiment.tasks_in(case_set)]
    pairs: list[Pair] = []
    for task in tasks:
        for k, order in enumerate(orders):
            seed = derive_seed(experiment.id, run_seed, task, k)
            pairs.append(
                Pair(
                    index=len(pairs),
                    task=task,
                    trial=k,
                    seed=seed,
                    model_seed=model_seed(seed),
                    order=list(order),
                )
            )
    campaigns = [
        Campaign(id=campaign_id(run_id, k, arm), pair=k, arm=arm, tasks=list(tasks))
        for k, order in enumerate(orders)
        for arm in order
    ]
    return Schedule(
        experiment=experiment.id,
        run_seed=run_seed,
        order_policy=experiment.order_policy,
        pairs=pairs,
        campaigns=campaigns,
    )
