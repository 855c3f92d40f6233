"""Campaign schedules: the exact execution order, recorded before the first attempt."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from pairbench.schedule import (
    Schedule,
    build_schedule,
    confirmation_order,
    derive_seed,
    screening_order,
)
from pairbench.spec import Experiment

TASKS = ("ar-002", "ar-001", "ar-003")  # declared order, deliberately not sorted


def _experiment(order: object = None) -> Experiment:
    return Experiment.model_validate(
        {
            "id": "rra",
            "version": "1",
            "order": order if order is not None else {"block": "campaign"},
            "budget": {"concurrency": 1},
            "agent": {"adapter": "scripted"},
            "arms": {"baseline": {}, "candidate": {}},
            "tasks": [{"id": t, "prompt": "p.md", "grader": {"name": "g"}} for t in TASKS],
        }
    )


def test_screening_is_one_pair_whose_order_is_the_documented_seeded_coin() -> None:
    for seed in range(8):
        schedule = build_schedule(_experiment(), seed, run_id="rra-run")
        order = screening_order(_experiment(), seed)
        digest = hashlib.sha256(f"rra|confirmation|{seed}".encode()).digest()
        coin = int(np.random.default_rng(int.from_bytes(digest[:8], "big")).integers(2))
        assert order[0] == ("baseline", "candidate")[coin]
        assert [c.id for c in schedule.campaigns] == [f"rra-run-P0-{arm}" for arm in order]
        assert {p.trial for p in schedule.pairs} == {0}
    leads = {screening_order(_experiment(), seed)[0] for seed in range(8)}
    assert leads == {"baseline", "candidate"}  # the coin lands both ways


def test_execution_runs_each_campaign_whole_in_declared_task_order() -> None:
    order = confirmation_order(5, 3, experiment="rra")
    schedule = build_schedule(_experiment(), 3, run_id="R", campaign_order=order)
    expected = [
        f"{arm}/{task}/{k}" for k, arms in enumerate(order) for arm in arms for task in TASKS
    ]
    assert [key.label for key in schedule.execution()] == expected
    assert [c.tasks for c in schedule.campaigns] == [list(TASKS)] * 10  # identical across arms
    assert [c.id for c in schedule.campaigns] == [
        f"R-P{k}-{arm}" for k, arms in enumerate(order) for arm in arms
    ]
    # Pairs stay one per (task, trial), with the paired seed (the arm is not an input) and
    # their campaign pair's order, so results and reports read them as before.
    assert len(schedule.pairs) == 15 and schedule.attempts == 30
    for pair in schedule.pairs:
        assert pair.order == order[pair.trial]
        assert pair.seed == derive_seed("rra", 3, pair.task, pair.trial)
    assert schedule.order_policy == "campaign"


def test_a_bad_campaign_order_and_an_order_without_campaigns_are_refused() -> None:
    with pytest.raises(ValueError, match="is not the arms"):
        build_schedule(_experiment(), 1, campaign_order=[["baseline", "baseline"]])
    with pytest.raises(ValueError, match="no campaign blocks"):
        build_schedule(_experiment("alternate"), 1, campaign_order=[["baseline", "candidate"]])


def test_schedules_without_campaigns_dump_and_read_as_before() -> None:
    plain = build_schedule(_experiment("alternate"), 1)
    dumped = plain.model_dump(mode="json")
    assert "campaigns" not in dumped  # run.json of other runs keeps its bytes
    assert Schedule.model_validate(dumped) == plain and plain.execution() == []
    campaign = build_schedule(_experiment(), 1, run_id="R")
    assert Schedule.model_validate(campaign.model_dump(mode="json")) == campaign
