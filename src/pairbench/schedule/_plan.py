"""The schedule: every planned attempt, its paired seed, and the arm order within each pair."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from pydantic import Field

from pairbench._model import Frozen
from pairbench.schedule._seeds import derive_seed, model_seed
from pairbench.spec._models import Experiment

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


class Schedule(Frozen):
    """The whole plan, written to ``run.json`` before the first attempt."""

    experiment: str
    run_seed: int
    order_policy: str
    pairs: list[Pair] = Field(default_factory=list)

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


def build_schedule(experiment: Experiment, run_seed: int, case_set: str | None = None) -> Schedule:
    """Plan every pair: tasks in declared order, trials 0..n-1, arms ordered per policy.

    ``case_set`` keeps only the tasks of that case set (None: every task).

    ``alternate``: the declared arm order, rotated by one for each successive pair, so each
    arm leads equally often. ``randomized``: a permutation per pair drawn from a generator
    seeded from (experiment, run seed), recorded here so the order is never re-drawn.

    **Usage**::

        s = build_schedule(experiment, run_seed=7)
        s.pairs[0].order, s.pairs[1].order
        # (['baseline', 'local-stdio', 'remote-http'], ['local-stdio', 'remote-http', 'baseline'])
    """
    arms = list(experiment.arms)
    rng = _order_rng(experiment.id, run_seed)
    pairs: list[Pair] = []
    for task in experiment.tasks_in(case_set):
        for trial in range(experiment.trials_for(task)):
            index = len(pairs)
            if experiment.order == "alternate":
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
        experiment=experiment.id, run_seed=run_seed, order_policy=experiment.order, pairs=pairs
    )
