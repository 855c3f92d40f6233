"""The cost ceiling: measured spend plus a reservation per attempt in flight never passes it."""

from __future__ import annotations

import asyncio
import json
import math
import shutil
from pathlib import Path

import pytest

from pairbench import start_run
from pairbench.runner._ceiling import CostCeiling, Spend
from pairbench.runner._recover import recover_state
from pairbench.schedule._plan import Schedule
from pairbench.store import Journal
from pairbench.store._events import AttemptFinished, AttemptStarted
from pairbench.store._records import Metric, Metrics, TrialResult
from pairbench.store._run_dir import RunDir

EXAMPLE = Path(__file__).parents[2] / "examples" / "simulated"
SEED = 8


def _example(root: Path, budget: str) -> Path:
    """The simulated example with ``budget`` in place of its own."""
    shutil.copytree(EXAMPLE, root / "simulated")
    path = root / "simulated" / "experiment.yaml"
    text = path.read_text(encoding="utf-8")
    own = "budget: {trial_timeout_s: 60, concurrency: 4}"
    assert own in text
    path.write_text(text.replace(own, f"budget: {{{budget}}}"), encoding="utf-8")
    return path


def _stored_costs(run_dir: Path) -> list[float]:
    """Every cost in every stored record, read from the JSON files."""
    costs = []
    for folder in ("results", "infra", "interrupted"):
        for file in sorted((run_dir / folder).rglob("*.json")):
            metrics = json.loads(file.read_text(encoding="utf-8")).get("metrics")
            if metrics is not None and metrics["cost_usd"]["value"] is not None:
                costs.append(float(metrics["cost_usd"]["value"]))
    return costs


def _outcomes(run_dir: Path) -> list[str]:
    files = sorted((run_dir / "results").rglob("*.json"))
    return [json.loads(f.read_text(encoding="utf-8"))["outcome"] for f in files]


@pytest.mark.parametrize("estimate", [None, 0.02], ids=["largest-seen", "declared"])
def test_the_simulated_example_ends_within_a_ten_cent_ceiling_at_concurrency_4(
    tmp_path: Path, estimate: float | None
) -> None:
    declared = "" if estimate is None else f", cost_per_trial_usd: {estimate}"
    exp = _example(tmp_path, f"concurrency: 4, cost_ceiling_usd: 0.10{declared}")
    outcome = start_run(exp, tmp_path / "runs", run_seed=SEED)
    assert outcome.status.startswith("stopped: budget stop: the spend $")
    costs = _stored_costs(outcome.run_dir)
    if estimate is not None:
        # The guarantee's premise: no attempt cost more than the reservation it made.
        assert max(costs) <= estimate
    assert math.fsum(costs) <= 0.10
    outcomes = _outcomes(outcome.run_dir)
    assert len(outcomes) == 30 and "not_run" in outcomes
    assert len(costs) == 30 - outcomes.count("not_run")  # every attempt that ran has a cost
    # Resume starts from the stored spend, the very number the files add up to.
    schedule = Schedule.model_validate(
        json.loads((outcome.run_dir / "run.json").read_bytes())["schedule"]
    )
    state = recover_state(RunDir(outcome.run_dir), schedule)
    assert state.spend.usd(estimate) == math.fsum(costs)
    assert state.spend.largest == max(costs)


def test_the_stop_message_names_the_spend_the_reservation_and_the_ceiling(
    tmp_path: Path,
) -> None:
    exp = _example(tmp_path, "concurrency: 1, cost_ceiling_usd: 0.10, cost_per_trial_usd: 0.03")
    outcome = start_run(exp, tmp_path / "runs", run_seed=SEED)
    message = (
        "budget stop: the spend $0.0743 plus the next attempt's reservation $0.0300 "
        "(the declared cost_per_trial_usd) would pass the ceiling $0.10"
    )
    assert outcome.status == f"stopped: {message}"
    # One attempt at a time: the spend named is every stored cost.
    assert f"${math.fsum(_stored_costs(outcome.run_dir)):.4f}" == "$0.0743"
    results = [json.loads(f.read_bytes()) for f in (outcome.run_dir / "results").rglob("*.json")]
    assert {r["reason"] for r in results if r["outcome"] == "not_run"} == {message}


def test_with_no_estimate_and_no_cost_seen_yet_attempts_run_one_at_a_time(tmp_path: Path) -> None:
    exp = _example(tmp_path, "concurrency: 4, cost_ceiling_usd: 0.10")
    outcome = start_run(exp, tmp_path / "runs", run_seed=SEED)
    events = [
        (e.event, e.key, e.attempt)
        for e in Journal.read(outcome.run_dir / "journal.jsonl")
        if isinstance(e, AttemptStarted | AttemptFinished)
    ]
    # Four slots, yet the first attempt ends before any other starts: its cost is the
    # first worst case the others can reserve.
    first = events[0]
    assert first[0] == "attempt_started"
    assert events[1] == ("attempt_finished", first[1], first[2])


def _priced(cost: float | None) -> TrialResult:
    wall = Metric.measured(1.0, "test")
    usd = Metric.missing("none") if cost is None else Metric.measured(cost, "test")
    metrics = Metrics(
        wall_ms=wall,
        cold_start_ms=Metric.missing("none"),
        turns=Metric.missing("none"),
        input_tokens=Metric.missing("none"),
        output_tokens=Metric.missing("none"),
        cost_usd=usd,
    )
    return TrialResult.model_validate(
        {
            "run_id": "r",
            "experiment": "e",
            "arm": "a",
            "task": "t",
            "trial": 0,
            "seed": 1,
            "model_seed": 1,
            "attempt": 1,
            "start_order": 0,
            "outcome": "passed",
            "reason": "ok",
            "agent": "simulated",
            "metrics": metrics,
        }
    )


def test_reservations_wait_for_the_first_cost_then_fill_the_room_it_leaves() -> None:
    async def scenario() -> list[str]:
        ceiling = CostCeiling(0.10, None, Spend())
        seen: list[str] = []
        first = await ceiling.reserve()
        assert first is not None and first.usd is None  # unknown: it runs alone
        waiting = [asyncio.ensure_future(ceiling.reserve()) for _ in range(4)]
        await asyncio.sleep(0)
        seen.append(f"waiting {sum(not w.done() for w in waiting)}")
        ceiling.settle(first, _priced(0.03))  # spend 0.03; each next reserves 0.03
        await asyncio.sleep(0)
        held = [w.result() for w in waiting if w.done()]
        seen.append(f"started {len(held)} at {[h.usd for h in held if h]}")
        for h in held:
            assert h is not None
            ceiling.settle(h, _priced(0.02))  # spend 0.07: room for one more of 0.03
        await asyncio.sleep(0)
        seen.append(f"started {sum(w.done() for w in waiting)}")
        third = waiting[2].result()
        assert third is not None
        ceiling.settle(third, _priced(0.01))  # spend 0.08: 0.03 more would pass 0.10
        await asyncio.sleep(0)
        last = waiting[3].result()
        seen.append(f"refused: {last is None}, {ceiling.reason}")
        return seen

    assert asyncio.run(scenario()) == [
        "waiting 4",
        "started 2 at [0.03, 0.03]",
        "started 3",
        "refused: True, budget stop: the spend $0.0800 plus the next attempt's reservation "
        "$0.0300 (the largest cost of an attempt so far) would pass the ceiling $0.10",
    ]


def test_spend_is_the_exact_sum_whatever_the_order() -> None:
    costs = [0.1, 0.2, 0.3, 1e-9, 0.7, 1e-3, 0.0105, 0.01095] * 7
    forward, backward = Spend(), Spend()
    for cost in costs:
        forward.add(_priced(cost))
    for cost in reversed(costs):
        backward.add(_priced(cost))
    forward.add(_priced(None))  # ran, no cost recorded: charged the estimate
    assert forward.usd(None) == backward.usd(None) == math.fsum(costs)
    assert forward.usd(0.5) == math.fsum([*costs, 0.5])


def test_a_tasks_own_worst_case_and_the_spend_before_the_run_count_against_the_ceiling(
    tmp_path: Path,
) -> None:
    # 0.0743 after three attempts at 0.03 each reserved (see the test above); with 0.05 spent
    # before the run, the same ceiling stops it one attempt sooner.
    exp = _example(
        tmp_path,
        "concurrency: 1, cost_ceiling_usd: 0.10, cost_per_trial_usd: 0.03, prior_spend_usd: 0.05",
    )
    outcome = start_run(exp, tmp_path / "runs", run_seed=SEED)
    assert "($0.0500 of it before this run)" in outcome.status
    assert math.fsum(_stored_costs(outcome.run_dir)) + 0.05 <= 0.10
    text = exp.read_text(encoding="utf-8").replace("prior_spend_usd: 0.05", "prior_spend_usd: 0")
    first = "  - id: easy-task\n"
    assert first in text
    exp.write_text(text.replace(first, first + "    cost_per_trial_usd: 0.2\n"), encoding="utf-8")
    stopped = start_run(exp, tmp_path / "runs2", run_seed=SEED)
    # The first task's own worst case (0.2) can never fit under 0.10: nothing starts.
    assert "$0.2000 (the task's declared cost_per_trial_usd)" in stopped.status
    assert set(_outcomes(stopped.run_dir)) == {"not_run"}


def test_an_attempt_that_costs_more_than_it_reserved_raises_every_later_reservation() -> None:
    # The $7-a-session engine against a $20 ceiling with $0.272 declared: the declared worst
    # case alone lets a third $7 session start at $14 spent ($14.272 <= $20), ending at $21.
    async def scenario() -> tuple[list[float | None], str | None]:
        ceiling = CostCeiling(20.0, 0.272, Spend())
        reserved: list[float | None] = []
        while (held := await ceiling.reserve()) is not None:
            reserved.append(held.usd)
            ceiling.settle(held, _priced(7.0))
        return reserved, ceiling.reason

    reserved, reason = asyncio.run(scenario())
    assert reserved == [0.272, 7.0]  # the overshoot raised the second reservation
    assert reason == (
        "budget stop: the spend $14.0000 plus the next attempt's reservation $7.0000 (the "
        "largest cost seen, which passed its declared worst case) would pass the ceiling $20.00"
    )


def test_a_task_declared_above_the_overshoot_keeps_its_own_worst_case() -> None:
    async def scenario() -> list[float | None]:
        ceiling = CostCeiling(20.0, None, Spend())
        first = await ceiling.reserve(0.5)
        assert first is not None
        ceiling.settle(first, _priced(0.9))  # overshoot: 0.9 > 0.5
        small, large = await ceiling.reserve(0.5), None
        assert small is not None
        ceiling.settle(small, _priced(0.1))
        large = await ceiling.reserve(2.0)
        assert large is not None
        return [small.usd, large.usd]

    assert asyncio.run(scenario()) == [0.9, 2.0]


def test_a_scored_attempt_that_recorded_no_cost_is_charged_its_reservation() -> None:
    async def scenario() -> float:
        spend = Spend()
        ceiling = CostCeiling(20.0, None, spend)
        held = await ceiling.reserve(0.272)
        assert held is not None
        ceiling.settle(held, _priced(None))  # ran to "passed", reported nothing
        return spend.usd(None)

    # Not $0: an agent that reports no cost is charged the worst case it reserved.
    assert asyncio.run(scenario()) == 0.272
