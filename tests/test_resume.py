"""Crash safety: SIGKILL the runner mid-run, then `pairbench resume` finishes the run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.common import cli, cli_here, events_of
from pairbench.report.summary._build import build_summary, summarize
from pairbench.store import Journal, load_run, load_table, sha256_file
from pairbench.store._events import AttemptFinished, AttemptStarted

pytestmark = pytest.mark.whole_run

SLOW_AGENT = "import sys, time; sys.stdin.read(); time.sleep(0.4); print('forty-two')"


def _write_experiment(root: Path, *, version: str = "1", trials: int = 3) -> Path:
    (root / "prompt.md").write_text("What is the answer?\n", encoding="utf-8")
    path = root / "experiment.yaml"
    tasks = "\n".join(
        f"  - {{id: q{i}, prompt: prompt.md, grader: {{name: exact-answer, args: "
        f"{{expect: forty-two}}}}}}"
        for i in range(4)
    )
    path.write_text(
        f"""id: slow
version: "{version}"
trials: {trials}
budget: {{trial_timeout_s: 30, concurrency: 2}}
agent: {{adapter: command, settings: {{command: [python3, -c, "{SLOW_AGENT}"]}}}}
arms:
  a: {{}}
  b: {{}}
tasks:
{tasks}
""",
        encoding="utf-8",
    )
    return path


def _finished(run_dir: Path) -> list[AttemptFinished]:
    return [
        e
        for e in events_of(Journal.read(run_dir / "journal.jsonl"), AttemptFinished)
        if e.outcome != "interrupted"
    ]


@pytest.fixture
def short_tmpdir() -> Iterator[Path]:
    """A TMPDIR of this test's own, short enough that the runner keeps its attempts'
    temp folders there (see ``runner._folders.short_tmp``)."""
    folder = Path(tempfile.mkdtemp(prefix="rs", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_sigkill_then_resume_completes_without_rerunning(
    tmp_path: Path, short_tmpdir: Path
) -> None:
    exp = _write_experiment(tmp_path)
    runs = tmp_path / "runs"
    env = {**os.environ, "TMPDIR": str(short_tmpdir)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pairbench",
            "run",
            str(exp),
            "--runs-dir",
            str(runs),
            "--run-seed",
            "5",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    run_dir: Path | None = None
    while time.monotonic() < deadline:
        dirs = list(runs.glob("slow-*")) if runs.exists() else []
        if dirs and len(_finished(dirs[0])) >= 5:
            run_dir = dirs[0]
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert run_dir is not None, "the runner never finished five trials"
    before = {e.key for e in _finished(run_dir)}
    assert 5 <= len(before) < 24
    # The killed runner could not remove its running attempts' TMPDIRs (what an agent
    # wrote there may be a secret); the resume removes them, and its own.
    left = sorted(p.name for p in short_tmpdir.glob("pb-*"))
    assert left, "no attempt was running when the runner was killed"

    done = cli("resume", str(run_dir), cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    assert sorted(p.name for p in short_tmpdir.iterdir()) == []

    results = sorted((run_dir / "results").rglob("*.json"))
    assert len(results) == 24  # 2 arms x 4 tasks x 3 trials, one final result each
    events = Journal.read(run_dir / "journal.jsonl")
    started = Counter(e.key for e in events_of(events, AttemptStarted))
    for key in before:
        assert started[key] == 1, f"{key} finished before the kill but ran again"
    finals = [e for e in events_of(events, AttemptFinished) if e.result]
    for event in finals:
        assert sha256_file(run_dir / str(event.result)) == event.result_sha256
        if event.transcript:
            assert sha256_file(run_dir / event.transcript) == event.transcript_sha256
    outcomes = Counter(json.loads(p.read_text())["outcome"] for p in results)
    assert outcomes == {"passed": 24}
    # Everything the crash left is journaled by name: verify passes, and the trial table
    # rebuilt from the journal's rows reports what the result files say.
    verified = cli_here("verify", str(run_dir), cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    loaded = load_table(run_dir)
    files = load_run(run_dir)
    assert loaded.source in {"journal", "trials.npz"}
    expected = build_summary(files.info, files.results, [*files.infra, *files.interrupted])
    assert summarize(loaded.info, loaded.table) == expected


def test_resume_refuses_a_changed_experiment(tmp_path: Path) -> None:
    # One trial per pair (8 attempts, not 24): the refusal reads the experiment, not results.
    exp = _write_experiment(tmp_path, trials=1)
    runs = tmp_path / "runs"
    first = cli_here("run", str(exp), "--runs-dir", str(runs), "--run-seed", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    run_dir = next(runs.glob("slow-*"))
    _write_experiment(tmp_path, version="2", trials=1)  # only the version changes
    refused = cli_here("resume", str(run_dir), cwd=tmp_path)
    assert refused.returncode != 0
    assert "changed since the run started" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("bad", ["missing-dir"])
def test_resume_of_a_folder_that_is_not_a_run_is_a_clear_error(tmp_path: Path, bad: str) -> None:
    out = cli_here("resume", str(tmp_path / bad), cwd=tmp_path)
    assert out.returncode != 0 and "not a pairbench run directory" in out.stderr
