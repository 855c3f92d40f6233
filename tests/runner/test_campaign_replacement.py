"""A campaign the runner is killed in: kept as incomplete, re-run whole under a new id on
resume, and reported with and without the replacement (real runner process, SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.common import cli_here, events_of
from pairbench import resume_run
from pairbench.report.summary._build import summarize
from pairbench.store import Journal, load_table
from pairbench.store._events import AttemptStarted, CampaignIncomplete

TASKS = ("t0", "t1", "t2")
# While `flag` exists (the first sitting): t0 answers wrong, t1 announces itself and hangs
# (the runner is killed there). Once it is gone every scenario answers right.
AGENT = (
    "import os, sys, time; p = sys.stdin.read(); flag, mark = sys.argv[1], sys.argv[2]\n"
    "if os.path.exists(flag) and 'HANG' in p:\n"
    "    open(mark, 'w').close(); time.sleep(60)\n"
    "print('no' if os.path.exists(flag) and 'WRONG' in p else 'ok')"
)

pytestmark = pytest.mark.whole_run  # whole runs against real loopback servers


def _experiment(root: Path, replacement: str = "") -> Path:
    prompts = {"t0": "WRONG\n", "t1": "HANG\n", "t2": "Answer.\n"}
    for task, text in prompts.items():
        (root / f"{task}.md").write_text(text, encoding="utf-8")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    command = ["python3", str(root / "agent.py"), str(root / "flag"), str(root / "hanging")]
    listed = "\n".join(
        f"  - {{id: {t}, prompt: {t}.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}"
        for t in TASKS
    )
    path = root / "experiment.yaml"
    path.write_text(
        "id: camp\nversion: '1'\norder: {block: campaign}\n"
        "budget: {trial_timeout_s: 90, concurrency: 1}\n"
        f"{replacement}"
        f"agent: {{adapter: command, settings: {{command: {json.dumps(command)}}}}}\n"
        f"arms: {{baseline: {{}}, candidate: {{}}}}\ntasks:\n{listed}\n",
        encoding="utf-8",
    )
    (root / "flag").touch()
    return path


def _killed_mid_campaign(root: Path, exp: Path) -> Path:
    """Start a screening run in its own process; SIGKILL it while t1 of the first
    campaign runs; return the run folder."""
    runs = root / "runs"
    argv = [sys.executable, "-m", "pairbench", "run", str(exp), "--stage", "screening"]
    proc = subprocess.Popen(
        [*argv, "--runs-dir", str(runs), "--run-seed", "1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (root / "hanging").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "t1 never started"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (root / "flag").unlink()
    [run_dir] = runs.iterdir()
    return run_dir


def test_a_campaign_killed_midway_is_kept_incomplete_and_replaced_whole(tmp_path: Path) -> None:
    exp = _experiment(tmp_path)
    run_dir = _killed_mid_campaign(tmp_path, exp)
    run_id = run_dir.name
    first_started = [
        e.key for e in events_of(Journal.read(run_dir / "journal.jsonl"), AttemptStarted)
    ]
    first, second = (first_started[0].split("/")[0], "")
    second = "candidate" if first == "baseline" else "baseline"
    assert first_started == [f"{first}/t0/0", f"{first}/t1/0"]

    outcome = resume_run(run_dir)
    assert outcome.status == "complete"
    events = Journal.read(run_dir / "journal.jsonl")
    [line] = events_of(events, CampaignIncomplete)
    assert line.campaign == f"{run_id}-P0-{first}"
    assert line.replaced_by == f"{run_id}-P0-{first}-R1"
    assert [m.key for m in line.moved] == [f"{first}/t0/0"]  # what it finished, kept
    # The whole campaign ran again, in the locked order, then the other arm's.
    started = [(e.key, e.attempt) for e in events_of(events, AttemptStarted)]
    assert started[2:] == [
        (f"{first}/t0/0", 2), (f"{first}/t1/0", 2), (f"{first}/t2/0", 1),
        (f"{second}/t0/0", 1), (f"{second}/t1/0", 1), (f"{second}/t2/0", 1),
    ]  # fmt: skip
    kept = json.loads((run_dir / "replaced" / first / "t0" / "0.1.json").read_text())
    assert (kept["outcome"], kept["attempt"]) == ("failed", 1)
    assert (run_dir / "replaced" / first / "t0" / "0.1.jsonl").is_file()
    assert (run_dir / "interrupted" / first / "t1" / "0.1.jsonl").is_file()
    final = json.loads((run_dir / "results" / first / "t0" / "0.json").read_text())
    assert (final["outcome"], final["attempt"]) == ("passed", 2)

    campaigns = json.loads((run_dir / "campaigns.json").read_text(encoding="utf-8"))
    assert [(c["id"], c["status"], c["replaced_by"], c["replaces"]) for c in campaigns] == [
        (f"{run_id}-P0-{first}", "incomplete", f"{run_id}-P0-{first}-R1", None),
        (f"{run_id}-P0-{first}-R1", "complete", None, f"{run_id}-P0-{first}"),
        (f"{run_id}-P0-{second}", "complete", None, None),
    ]
    verified = cli_here("verify", str(run_dir), cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr

    # With the replacement every scenario of both arms passed; without it, the first
    # arm's t0 is the incomplete campaign's failed record.
    loaded = load_table(run_dir, use_cache=False)
    summary = summarize(loaded.info, loaded.table, bootstrap_reps=200)
    arms = {a["arm"]: a for a in summary["arms"]}
    assert arms[first]["success"]["k"] == 3 and arms[first]["success"]["n"] == 3
    assert arms[first]["success_without_replacements"]["k"] == 2
    assert arms[second]["success_without_replacements"]["k"] == 3
    assert summary["replaced_attempts"] == 1


def test_a_replacement_past_the_policy_maximum_stops_the_run_and_moves_nothing(
    tmp_path: Path,
) -> None:
    exp = _experiment(tmp_path, "replacement: {max_per_campaign: 0}\n")
    run_dir = _killed_mid_campaign(tmp_path, exp)
    outcome = resume_run(run_dir)
    assert outcome.status.startswith("stopped: campaign ")
    assert "replacement.max_per_campaign" in outcome.status
    [line] = events_of(Journal.read(run_dir / "journal.jsonl"), CampaignIncomplete)
    assert line.replaced_by is None and line.moved == []
    assert not (run_dir / "replaced").exists()
    campaigns = json.loads((run_dir / "campaigns.json").read_text(encoding="utf-8"))
    assert [c["status"] for c in campaigns] == ["incomplete", "not_started"]
    # Resuming again stays stopped: the campaign is never finished piecemeal.
    again = resume_run(run_dir)
    assert again.status.startswith("stopped: campaign ")
    assert len(events_of(Journal.read(run_dir / "journal.jsonl"), CampaignIncomplete)) == 1


def test_check_explains_a_bad_replacement_policy(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, "replacement: {eligible: [timeout], max_per_campaign: 99}\n")
    done = cli_here("check", str(exp), cwd=tmp_path)
    assert done.returncode != 0
    assert "experiment.yaml:5: replacement.eligible[0]: must be 'infra'" in done.stderr
    assert "replacement.max_per_campaign: must be at most 10 (got 99)" in done.stderr
