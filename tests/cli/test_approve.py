"""`pairbench approve` through the real CLI."""

from __future__ import annotations

from pathlib import Path

from helpers.campaign import campaign_experiment, plan_for, screened
from helpers.common import cli_here
from pairbench.schedule import plan_sha256, read_plan, write_plan

EXP = ("--experiment", "experiment.yaml")


def _write_plan(path: Path) -> tuple[str, str]:
    exp = campaign_experiment(path.parent)
    run = screened(exp)
    return write_plan(path, plan_for(exp, 6, screening_run=run)), run


def test_approve_prints_what_it_approved_and_refuses_a_second_time(tmp_path: Path) -> None:
    sha, run = _write_plan(tmp_path / "plan.json")
    done = cli_here("approve", "plan.json", "--by", "Ada", *EXP, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    approval = read_plan(tmp_path / "plan.json").approval
    assert approval is not None and approval.by == "Ada" and approval.plan_sha256 == sha
    assert done.stdout == (
        f"Approved plan.json: 6 pairs of camp (confirmation of screening run {run}), by Ada "
        f"at {approval.at.isoformat()}\n"
        f"  plan sha256 {sha}\n"
    )

    again = cli_here("approve", "plan.json", "--by", "Grace", *EXP, cwd=tmp_path)
    assert again.returncode == 1
    assert again.stdout == ""
    assert again.stderr.startswith("error: plan.json is already approved by Ada at ")
    assert "Traceback" not in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert plan_sha256(read_plan(tmp_path / "plan.json")) == sha


def test_approve_of_a_malformed_plan_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    campaign_experiment(tmp_path)
    (tmp_path / "plan.json").write_text('{"experiment": "x"}\n')
    done = cli_here("approve", "plan.json", "--by", "Ada", *EXP, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(
        "error: plan.json is not a valid confirmation plan: field protocol_hash: Field required"
    )
    assert len(done.stderr.strip().splitlines()) == 1
