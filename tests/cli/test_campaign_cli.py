"""Campaign stages through the real CLI: screening, plan, approve, run --plan, refusals."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from helpers.campaign import campaign_experiment, planned_execution
from helpers.common import cli_here, events_of
from pairbench import start_run
from pairbench.runner import read_screening
from pairbench.schedule import PlanError, confirmation_order, read_plan
from pairbench.spec import load_experiment
from pairbench.store import Journal, load_run
from pairbench.store._events import AttemptStarted


def _screened(tmp_path: Path) -> Path:
    exp = campaign_experiment(tmp_path)
    outcome = start_run(exp, tmp_path / "runs", stage="screening", run_seed=3)
    assert outcome.status == "complete"
    return outcome.run_dir


def test_plan_prints_n_order_estimate_and_smallest_p_and_never_overwrites(
    tmp_path: Path,
) -> None:
    screening = _screened(tmp_path)
    args = ["plan", "experiment.yaml", "--stage", "confirmation", "--pairs", "5"]
    args += ["--screening", str(screening), "--run-seed", "7", "--write", "plan.json"]
    done = cli_here(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plan = read_plan(tmp_path / "plan.json")
    assert plan.n_pairs == 5 and plan.run_seed == 7 and plan.approval is None
    assert plan.order == confirmation_order(5, 7, experiment="camp")
    assert plan.screening_run == screening.name and plan.scenarios == ["t2", "t0", "t1"]
    # The estimate is the screening campaigns' wall time: every attempt's wall_ms, per arm.
    run = load_run(screening)
    per_arm = [
        sum(r.metrics.wall_ms.value or 0 for r in run.results if r.arm == arm and r.metrics)
        for arm in ("baseline", "candidate")
    ]
    assert plan.wall_time.screening_campaign_s == pytest.approx(sum(per_arm) / 2000, abs=1e-3)
    assert plan.wall_time.upper_bound_s == 30 * 3 * 2 * 5
    # The run's wall time outside its attempts, per campaign, is in the estimate; the spread
    # takes each scenario's faster and slower arm.
    wall = plan.wall_time
    assert run.info.started_at is not None and run.info.ended_at is not None
    started = datetime.fromisoformat(run.info.started_at)
    ended = datetime.fromisoformat(run.info.ended_at)
    outside = (ended - started).total_seconds() - sum(per_arm) / 1000
    assert wall.overhead_campaign_s == pytest.approx(max(0.0, outside) / 2, abs=1e-2)
    assert wall.estimate_s == pytest.approx(
        (wall.screening_campaign_s + (wall.overhead_campaign_s or 0)) * 10, abs=1e-2
    )
    assert wall.low_s is not None and wall.high_s is not None
    # Each bound sums per-scenario seconds rounded to the millisecond: a few ms of slack.
    assert wall.low_s - 0.02 <= wall.estimate_s <= wall.high_s + 0.02
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Confirmation plan for camp: 5 campaign pairs (run seed 7)")
    assert "Scenario order, identical for every campaign: t2, t0, t1" in lines
    assert [line.strip() for line in lines if line.startswith("  pair ")] == [
        f"pair {k}: {' → '.join(order)}" for k, order in enumerate(plan.order)
    ]
    assert any(line.startswith("Wall time: about ") for line in lines)
    assert "at most 15 min 00 s (every scenario at its 30 s limit)." in done.stdout
    assert "Smallest attainable p (exact sign flip over 5 pairs): 0.0625" in lines
    assert "With 5 pairs no result can reach p < 0.05" in done.stdout
    assert "which needs at least 6 pairs" in done.stdout

    before = (tmp_path / "plan.json").read_bytes()
    again = cli_here(*args[:5], "6", *args[6:], cwd=tmp_path)
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr.startswith("error: plan.json already exists")
    assert (tmp_path / "plan.json").read_bytes() == before

    six = cli_here(*args[:5], "6", *args[6:-2], "--wall-budget", "1", cwd=tmp_path)
    assert six.returncode == 0, six.stderr  # no --write: printed only
    assert "Observed spread: " in six.stdout
    assert "A budget of 1 h 00 min 00 s fits " in six.stdout
    assert "Smallest attainable p (exact sign flip over 6 pairs): 0.03125" in six.stdout
    assert "no result can reach" not in six.stdout


def test_a_plan_builds_only_on_a_complete_screening_of_the_same_protocol(tmp_path: Path) -> None:
    screening = _screened(tmp_path)
    exp = tmp_path / "experiment.yaml"
    assert read_screening(load_experiment(exp), screening).run_id == screening.name
    exp.write_text(exp.read_text(encoding="utf-8").replace("version: '1'", "version: '2'"))
    with pytest.raises(PlanError, match="the experiment changed since"):
        read_screening(load_experiment(exp), screening)


@pytest.mark.whole_run
def test_screening_plan_approve_and_run_plan_through_the_cli(tmp_path: Path) -> None:
    campaign_experiment(tmp_path)
    assert cli_here("freeze", "experiment.yaml", "--no-servers", cwd=tmp_path).returncode == 0
    screened = cli_here("run", "experiment.yaml", "--stage", "screening", cwd=tmp_path)
    assert screened.returncode == 0, screened.stderr
    assert "2 campaigns, one attempt at a time, in this order:" in screened.stderr
    [screening] = (tmp_path / "runs").iterdir()
    made = cli_here(
        "plan", "experiment.yaml", "--stage", "confirmation", "--pairs", "6",
        "--screening", str(screening), "--write", "plan.json", cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr

    refused = cli_here("run", "experiment.yaml", "--plan", "plan.json", cwd=tmp_path)
    assert refused.returncode == 3 and len(refused.stderr.strip().splitlines()) == 1
    assert refused.stderr.startswith("error: plan.json is not approved")
    assert len(list((tmp_path / "runs").iterdir())) == 1  # nothing new

    approve = ("approve", "plan.json", "--by", "Ada", "--experiment", "experiment.yaml")
    assert cli_here(*approve, cwd=tmp_path).returncode == 0
    ran = cli_here("run", "experiment.yaml", "--plan", "plan.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    [confirmation] = [d for d in (tmp_path / "runs").iterdir() if d != screening]
    plan = read_plan(tmp_path / "plan.json")
    events = Journal.read(confirmation / "journal.jsonl")
    assert [e.key for e in events_of(events, AttemptStarted)] == planned_execution(plan)
    info = json.loads((confirmation / "run.json").read_text(encoding="utf-8"))
    assert plan.approval is not None
    assert info["stage"] == "confirmation" and info["plan"]["sha256"] == plan.approval.plan_sha256


def test_the_cli_refuses_concurrency_above_one_for_campaigns(tmp_path: Path) -> None:
    campaign_experiment(tmp_path)
    done = cli_here(
        "run", "experiment.yaml", "--stage", "screening", "--concurrency", "2", cwd=tmp_path
    )
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr == (
        "error: --concurrency 2 is refused: camp runs in campaigns, one attempt at a time in "
        "the recorded order; drop --concurrency\n"
    )
    assert not (tmp_path / "runs").exists()
