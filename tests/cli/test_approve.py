"""`pairbench approve` through the real CLI."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from helpers.common import cli_here
from pairbench.schedule import build_confirmation_plan, plan_sha256, read_plan, write_plan


def _write_plan(path: Path) -> str:
    plan = build_confirmation_plan(
        experiment="runtime-revision-ab",
        protocol_hash="cd" * 32,
        screening_run="rra-screen",
        n_pairs=6,
        run_seed=3,
        scenarios=["AR-001", "AR-002"],
        screening_campaign_s=60.0,
        trial_timeout_s=120.0,
        created_at=datetime(2026, 5, 1, tzinfo=UTC),
    )
    return write_plan(path, plan)


def test_approve_prints_what_it_approved_and_refuses_a_second_time(tmp_path: Path) -> None:
    sha = _write_plan(tmp_path / "plan.json")
    done = cli_here("approve", "plan.json", "--by", "Ada", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    approval = read_plan(tmp_path / "plan.json").approval
    assert approval is not None and approval.by == "Ada" and approval.plan_sha256 == sha
    assert done.stdout == (
        "Approved plan.json: 6 pairs of runtime-revision-ab (confirmation of screening run "
        f"rra-screen), by Ada at {approval.at.isoformat()}\n"
        f"  plan sha256 {sha}\n"
    )

    again = cli_here("approve", "plan.json", "--by", "Grace", cwd=tmp_path)
    assert again.returncode == 1
    assert again.stdout == ""
    assert again.stderr.startswith("error: plan.json is already approved by Ada at ")
    assert "Traceback" not in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert plan_sha256(read_plan(tmp_path / "plan.json")) == sha


def test_approve_of_a_malformed_plan_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text('{"experiment": "x"}\n')
    done = cli_here("approve", "plan.json", "--by", "Ada", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(
        "error: plan.json is not a valid confirmation plan: field protocol_hash: Field required"
    )
    assert len(done.stderr.strip().splitlines()) == 1
