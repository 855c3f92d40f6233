"""Campaign runs: screening and confirmation follow the recorded order, one attempt at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.campaign import (
    ARMS,
    TASKS,
    approved_plan,
    campaign_experiment,
    plan_for,
    planned_execution,
)
from helpers.common import events_of
from pairbench import start_run
from pairbench._errors import RunRefused
from pairbench.schedule import Schedule, write_plan
from pairbench.store import Journal
from pairbench.store._events import AttemptFinished, AttemptStarted, JournalEvent


def _journal(run_dir: Path) -> list[JournalEvent]:
    return Journal.read(run_dir / "journal.jsonl")


def _started(run_dir: Path) -> list[str]:
    return [e.key for e in events_of(_journal(run_dir), AttemptStarted)]


def _one_at_a_time(events: list[JournalEvent]) -> bool:
    """Every attempt finishes before the next one starts (journal order)."""
    kinds = [type(e) for e in events if isinstance(e, AttemptStarted | AttemptFinished)]
    return kinds == [AttemptStarted, AttemptFinished] * (len(kinds) // 2)


@pytest.mark.parametrize("n_pairs", [5, 6])
def test_a_confirmation_run_follows_its_approved_plan_attempt_by_attempt(
    tmp_path: Path, n_pairs: int
) -> None:
    exp = campaign_experiment(tmp_path)
    plan = approved_plan(exp, tmp_path / "plan.json", n_pairs)
    outcome = start_run(exp, tmp_path / "runs", plan=tmp_path / "plan.json")
    assert outcome.status == "complete"
    # The journal's attempts, in order, are the plan's: per pair, one arm's campaign of
    # every scenario in the locked order, then the other arm's.
    started = _started(outcome.run_dir)
    assert started == planned_execution(plan)
    assert len(started) == 2 * len(TASKS) * n_pairs
    assert _one_at_a_time(_journal(outcome.run_dir))
    for k in range(n_pairs):  # scenario order identical across arms
        per_arm = {
            arm: [
                s.split("/")[1] for s in started if s.startswith(f"{arm}/") and s.endswith(f"/{k}")
            ]
            for arm in ARMS
        }
        assert per_arm["baseline"] == per_arm["candidate"] == list(TASKS)

    info = json.loads((outcome.run_dir / "run.json").read_text(encoding="utf-8"))
    assert info["stage"] == "confirmation" and info["concurrency"] == 1
    assert info["run_seed"] == plan.run_seed
    assert plan.approval is not None
    assert info["plan"]["sha256"] == plan.approval.plan_sha256
    assert info["plan"]["approval"]["by"] == "Ada"
    schedule = Schedule.model_validate(info["schedule"])
    # Recorded in run.json, written before the first attempt (the journal links to it).
    assert [k.label for k in schedule.execution()] == started
    assert [c.id for c in schedule.campaigns] == [
        f"{outcome.run_id}-P{k}-{arm}" for k, order in enumerate(plan.order) for arm in order
    ]


def test_screening_runs_one_pair_whose_order_is_on_disk_before_any_attempt(
    tmp_path: Path,
) -> None:
    exp = campaign_experiment(tmp_path)
    seen: dict[str, object] = {}

    def announce(schedule: Schedule) -> None:
        [run_dir] = (tmp_path / "runs").iterdir()
        seen["run.json"] = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        seen["started"] = _started(run_dir)
        seen["schedule"] = schedule

    outcome = start_run(exp, tmp_path / "runs", stage="screening", run_seed=3, announce=announce)
    assert outcome.status == "complete"
    info = seen["run.json"]
    assert isinstance(info, dict) and seen["started"] == []  # recorded, nothing started yet
    assert info["stage"] == "screening" and "plan" not in info
    schedule = Schedule.model_validate(info["schedule"])
    assert schedule == seen["schedule"]
    order = [c.arm for c in schedule.campaigns]
    assert sorted(order) == sorted(ARMS) and {c.pair for c in schedule.campaigns} == {0}
    expected = [f"{arm}/{task}/0" for arm in order for task in TASKS]
    assert _started(outcome.run_dir) == expected
    assert len(outcome.results) == 6


def _nothing_made(runs: Path) -> bool:
    return not runs.exists() or not any(runs.iterdir())


def test_an_unapproved_plan_is_refused_and_nothing_is_made(tmp_path: Path) -> None:
    exp = campaign_experiment(tmp_path)
    write_plan(tmp_path / "plan.json", plan_for(exp, 5))
    with pytest.raises(RunRefused, match="is not approved"):
        start_run(exp, tmp_path / "runs", plan=tmp_path / "plan.json")
    assert _nothing_made(tmp_path / "runs")


def test_a_plan_edited_after_approval_is_refused(tmp_path: Path) -> None:
    exp = campaign_experiment(tmp_path)
    approved_plan(exp, tmp_path / "plan.json", 6)
    data = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    order = data["order"]
    j = next(j for j, pair in enumerate(order) if pair != order[0])
    order[0], order[j] = order[j], order[0]  # still balanced: only the hash tells
    (tmp_path / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RunRefused, match="changed after approval"):
        start_run(exp, tmp_path / "runs", plan=tmp_path / "plan.json")
    assert _nothing_made(tmp_path / "runs")


def test_a_plan_for_another_experiment_or_protocol_is_refused(tmp_path: Path) -> None:
    exp = campaign_experiment(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    approved_plan(campaign_experiment(other, exp_id="other"), tmp_path / "other.json", 5)
    with pytest.raises(RunRefused, match="is a plan for 'other', not 'camp'"):
        start_run(exp, tmp_path / "runs", plan=tmp_path / "other.json")
    approved_plan(exp, tmp_path / "old.json", 5, protocol_hash="0" * 64)
    with pytest.raises(RunRefused, match="the experiment changed"):
        start_run(exp, tmp_path / "runs", plan=tmp_path / "old.json")
    approved_plan(exp, tmp_path / "plan.json", 5)
    with pytest.raises(RunRefused, match="differs from the plan's run seed 11"):
        start_run(exp, tmp_path / "runs", plan=tmp_path / "plan.json", run_seed=12)
    assert _nothing_made(tmp_path / "runs")


def test_campaigns_refuse_concurrency_and_a_run_without_a_stage(tmp_path: Path) -> None:
    exp = campaign_experiment(tmp_path)
    with pytest.raises(RunRefused, match="--concurrency 2 is refused"):
        start_run(exp, tmp_path / "runs", stage="screening", concurrency=2)
    with pytest.raises(RunRefused, match="--stage screening"):
        start_run(exp, tmp_path / "runs")
    with pytest.raises(RunRefused, match="no campaign blocks"):
        plain = tmp_path / "plain"
        plain.mkdir()
        text = campaign_experiment(plain).read_text(encoding="utf-8")
        (plain / "experiment.yaml").write_text(
            text.replace("order: {block: campaign}\n", ""), encoding="utf-8"
        )
        start_run(plain / "experiment.yaml", tmp_path / "runs", stage="screening")
    assert _nothing_made(tmp_path / "runs")


FLAKY_SERVER = (
    "import os, sys, runpy; f = sys.argv[1]\n"
    "if not os.path.exists(f):\n    open(f, 'w').close(); sys.exit(3)\n"
    "sys.argv = ['tracker']; runpy.run_module("
    "'pairbench.studies.mcp_transports.tracker_server', run_name='__main__')"
)


def test_an_infra_retry_runs_in_place_before_the_next_attempt(tmp_path: Path) -> None:
    flag = tmp_path / "failed-once"
    tracker = {"transport": "stdio", "command": ["python3", "-c", FLAKY_SERVER, str(flag)]}
    arms = {"baseline": {"tools": "none"}, "candidate": {"tools": {"mcp": {"tracker": tracker}}}}
    (tmp_path / "p.md").write_text("Answer.\n", encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(
        "steps: [{call: tracker.list_repositories}]\nanswer: ok\nwithout_tools: ok\n",
        encoding="utf-8",
    )
    listed = "\n".join(
        f"  - {{id: {t}, prompt: p.md, plan: plan.yaml, "
        "grader: {name: exact-answer, args: {expect: ok}}}"
        for t in ("t0", "t1")
    )
    exp = tmp_path / "experiment.yaml"
    exp.write_text(
        "id: flaky\nversion: '1'\norder: {block: campaign}\nbudget: {concurrency: 1}\n"
        f"agent: {{adapter: scripted}}\narms: {json.dumps(arms)}\ntasks:\n{listed}\n",
        encoding="utf-8",
    )
    outcome = start_run(exp, tmp_path / "runs", stage="screening", run_seed=1)
    assert outcome.status == "complete"
    events = _journal(outcome.run_dir)
    assert _one_at_a_time(events)
    started = [(e.key, e.attempt) for e in events_of(events, AttemptStarted)]
    order = [a for a in ("baseline", "candidate") if started[0][0].startswith(a)]
    order += [a for a in ("baseline", "candidate") if a not in order]
    expected = []
    for arm in order:
        for task in ("t0", "t1"):
            expected.append((f"{arm}/{task}/0", 1))
            if (arm, task) == ("candidate", "t0"):  # the server failed once: retried here
                expected.append((f"{arm}/{task}/0", 2))
    assert started == expected


def test_other_runs_keep_run_json_without_stage_plan_or_campaigns(tmp_path: Path) -> None:
    exp = campaign_experiment(tmp_path)
    text = exp.read_text(encoding="utf-8").replace("order: {block: campaign}\n", "")
    exp.write_text(text, encoding="utf-8")
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    assert outcome.status == "complete"
    info = json.loads((outcome.run_dir / "run.json").read_text(encoding="utf-8"))
    assert not {"stage", "plan"} & set(info) and "campaigns" not in info["schedule"]
    assert info["order_policy"] == "alternate"
