"""Approvals are spent and every run mode refuses a lock that does not verify, played by a
motivated operator through the real CLI: re-running an approved plan from another runs
folder, stripping an approval to re-approve an edited plan, hand-writing an approval, and
editing a prompt after approval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.campaign import campaign_experiment, plan_for, screened
from helpers.common import cli_here
from pairbench.schedule import plan_sha256, read_plan, write_plan

EXP = ("--experiment", "experiment.yaml")


def _approved(root: Path, name: str, by: str = "Ada", *, run_seed: int = 11) -> str:
    """A plan from the screening under the lock, written to ``name`` and approved."""
    exp = root / "experiment.yaml"
    plan = plan_for(exp, 5, run_seed=run_seed, screening_run=screened(exp))
    write_plan(root / name, plan)
    done = cli_here("approve", name, "--by", by, *EXP, cwd=root)
    assert done.returncode == 0, done.stderr
    return plan_sha256(plan)


def _run_plan(root: Path, name: str, runs: str, *more: str) -> tuple[int, str]:
    done = cli_here("run", "experiment.yaml", "--plan", name, "--runs-dir", runs, *more, cwd=root)
    return done.returncode, done.stderr


@pytest.mark.whole_run
def test_a_second_run_of_an_approved_plan_is_refused_from_another_runs_folder(
    tmp_path: Path,
) -> None:
    campaign_experiment(tmp_path)
    _approved(tmp_path, "plan.json")
    assert _run_plan(tmp_path, "plan.json", "runs")[0] == 0
    [first] = (tmp_path / "runs").iterdir()
    code, err = _run_plan(tmp_path, "plan.json", "elsewhere")
    assert code == 3
    assert f"already ran as {first.name}" in err and "an approval is spent" in err
    assert not (tmp_path / "elsewhere").exists()
    # Stripping the approval and approving the same plan again spends nothing new.
    data = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    del data["approval"]
    (tmp_path / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    again = cli_here("approve", "plan.json", "--by", "Grace", *EXP, cwd=tmp_path)
    assert again.returncode == 3 and f"already ran as {first.name}" in again.stderr


@pytest.mark.whole_run
def test_a_re_approved_edited_plan_shows_both_approvals_in_its_report(tmp_path: Path) -> None:
    campaign_experiment(tmp_path)
    first_sha = _approved(tmp_path, "plan.json")
    # The operator strips the approval, edits the seed (another draw), and approves again.
    data = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    del data["approval"]
    data["run_seed"] = 12
    (tmp_path / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    done = cli_here("approve", "plan.json", "--by", "Grace", *EXP, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _run_plan(tmp_path, "plan.json", "runs")[0] == 0
    [run] = (tmp_path / "runs").iterdir()
    report = (run / "report.md").read_text(encoding="utf-8")
    second_sha = plan_sha256(read_plan(tmp_path / "plan.json"))
    screening = screened(tmp_path / "experiment.yaml")
    assert "approved by Grace at " in report and f"from screening run {screening}" in report
    assert "Approvals from this screening (2)" in report
    assert f"(sha256 {first_sha[:16]}…) by Ada at " in report
    assert f"(sha256 {second_sha[:16]}…) by Grace at " in report
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    plan = summary["run"]["plan"]
    assert [a["by"] for a in plan["approvals"]] == ["Ada", "Grace"]
    assert plan["approved_by"] == "Grace" and plan["screening_run"] == screening


def test_an_approval_the_ledger_does_not_hold_is_refused(tmp_path: Path) -> None:
    campaign_experiment(tmp_path)
    exp = tmp_path / "experiment.yaml"
    plan = plan_for(exp, 5, screening_run=screened(exp))
    write_plan(tmp_path / "plan.json", plan)
    # The approval recomputed by hand: a self-hash anyone can write.
    data = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    data["approval"] = {
        "by": "Ada",
        "at": "2026-01-02T00:00:00+00:00",
        "plan_sha256": plan_sha256(plan),
    }
    (tmp_path / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    code, err = _run_plan(tmp_path, "plan.json", "runs")
    assert code == 3 and "is not in the ledger" in err and "pairbench approve" in err
    assert not (tmp_path / "runs").exists()


def test_an_edited_prompt_refuses_run_and_run_plan_unless_accepted(tmp_path: Path) -> None:
    campaign_experiment(tmp_path)
    _approved(tmp_path, "plan.json")
    (tmp_path / "p.md").write_text("Answer, edited after approval.\n", encoding="utf-8")
    code, err = _run_plan(tmp_path, "plan.json", "runs")
    assert code == 3
    assert "the experiment does not match its lock" in err
    assert "file: p.md: expected" in err and "(--accept-change p.md)" in err
    screening = cli_here("run", "experiment.yaml", "--stage", "screening", "--runs-dir", "runs",
                         cwd=tmp_path)  # fmt: skip
    assert screening.returncode == 3 and "(--accept-change p.md)" in screening.stderr
    assert not (tmp_path / "runs").exists()
    wrong = _run_plan(tmp_path, "plan.json", "runs", "--accept-change", "q.md")
    assert wrong[0] == 3 and "(--accept-change p.md)" in wrong[1]

    code, err = _run_plan(tmp_path, "plan.json", "runs", "--accept-change", "p.md")
    assert code == 0, err
    [run] = (tmp_path / "runs").iterdir()
    report = (run / "report.md").read_text(encoding="utf-8")
    assert report.splitlines()[0].endswith("(CHANGED SINCE FREEZE)")
    first_row = next(line for line in report.splitlines() if line.startswith("- **"))
    assert first_row.startswith("- **CHANGED SINCE FREEZE:** p.md (file: frozen ")
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in info["accepted_changes"]] == ["p.md"]


@pytest.mark.whole_run
def test_a_plan_approved_on_one_model_build_is_refused_on_another(tmp_path: Path) -> None:
    """The operator screens against one server build, then swaps the build behind the same
    URL for the confirmation: the approval binds the endpoint's identity, so it is refused
    before any run folder exists, and runs once the screened build is back."""
    from pairbench.testing.chat_double import ChatScript, start_chat_double

    script = ChatScript(llama_cpp=True, system_fingerprint="b6001-screened")
    with start_chat_double(script) as server:
        exp = campaign_experiment(tmp_path)
        text = exp.read_text(encoding="utf-8")
        exp.write_text(text + f'proxy: {{upstream: "{server.url}", env: MODEL_URL}}\n')
        _approved(tmp_path, "plan.json")
        server.script = script.model_copy(update={"system_fingerprint": "b6002-swapped"})
        code, err = _run_plan(tmp_path, "plan.json", "runs")
        assert code == 3, err
        assert "approved for the model endpoint its screening" in err
        assert "differs in model_endpoint" in err and "b6002-swapped" in err, err
        assert not (tmp_path / "runs").exists()
        server.script = script
        code, err = _run_plan(tmp_path, "plan.json", "runs")
        assert code == 0, err
