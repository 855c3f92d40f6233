"""One writer per run, through the real CLI: a second run/resume/report is refused at once.

The agent waits for a gate file the test creates, so a writer is provably still inside its
run when the second one comes: a refusal that waited for the lock could never return.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from helpers.common import E, cli, events_of
from pairbench._errors import RunInUse
from pairbench.store import Journal, RunDir, sha256_file
from pairbench.store._events import AttemptFinished, AttemptStarted, RunResumed
from pairbench.store._load_run import read_run_info

pytestmark = pytest.mark.whole_run

_GATED_AGENT = """\
import os, sys, time
sys.stdin.read()
deadline = time.monotonic() + 300  # only so that a broken test cannot leave it behind
while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
    time.sleep(0.05)
print("forty-two")
"""

ARMS, TASKS, TRIALS = 2, 2, 2
PLANNED = ARMS * TASKS * TRIALS


def _write_experiment(root: Path, gate: Path) -> Path:
    agent = root / "gated_agent.py"
    agent.write_text(_GATED_AGENT, encoding="utf-8")
    (root / "prompt.md").write_text("What is the answer?\n", encoding="utf-8")
    tasks = "\n".join(
        f"  - {{id: q{i}, prompt: prompt.md, grader: {{name: exact-answer, args: "
        f"{{expect: forty-two}}}}}}"
        for i in range(TASKS)
    )
    path = root / "experiment.yaml"
    path.write_text(
        f"""id: gated
version: "1"
trials: {TRIALS}
budget: {{trial_timeout_s: 600, concurrency: 2}}
agent: {{adapter: command, settings: {{command: [python3, "{agent}", "{gate}"]}}}}
arms:
  a: {{}}
  b: {{}}
tasks:
{tasks}
""",
        encoding="utf-8",
    )
    return path


class Setup:
    """An experiment whose agents wait for ``gate``, and the runs folder it runs into."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.gate = root / "gate"
        self.experiment = _write_experiment(root, self.gate)
        self.runs = root / "runs"
        self._procs: list[subprocess.Popen[str]] = []
        self._logs: list[IO[str]] = []

    def start(self, *args: str) -> subprocess.Popen[str]:
        """``pairbench ARGS`` in the background; its stderr is read by :meth:`stderr`."""
        log = (self.root / f"stderr.{len(self._logs)}").open("w+", encoding="utf-8")
        proc = subprocess.Popen(
            [sys.executable, "-m", "pairbench", *args],
            cwd=self.root,
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
        self._procs.append(proc)
        self._logs.append(log)
        return proc

    def start_run(self) -> subprocess.Popen[str]:
        return self.start("run", str(self.experiment), "--runs-dir", str(self.runs))

    def stderr(self, proc: subprocess.Popen[str]) -> str:
        log = self._logs[self._procs.index(proc)]
        log.seek(0)
        return _unwrapped(log.read())

    def run_dir(self) -> Path | None:
        named = [p for p in self.runs.iterdir() if not p.name.startswith(".")]
        return named[0] if named else None

    def open_gate(self) -> None:
        self.gate.touch()

    def close(self) -> None:
        self.open_gate()  # lets any agent still waiting finish
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for log in self._logs:
            log.close()


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    made = Setup(tmp_path)
    yield made
    made.close()


def _unwrapped(text: str) -> str:
    """The CLI's message with the console's line wrapping undone."""
    return " ".join(text.split())


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def _events(run_dir: Path, kind: type[E]) -> list[E]:
    return events_of(Journal.read(run_dir / "journal.jsonl"), kind)


def _running_run(setup: Setup) -> tuple[subprocess.Popen[str], Path]:
    """Start ``pairbench run`` and return once an attempt is in flight (it holds the lock)."""
    proc = setup.start_run()
    found: list[Path] = []

    def attempt_started() -> bool:
        assert proc.poll() is None, setup.stderr(proc)
        run_dir = setup.run_dir() if setup.runs.is_dir() else None
        if run_dir is not None and _events(run_dir, AttemptStarted):
            found.append(run_dir)
            return True
        return False

    _wait_for(attempt_started, "the run's first attempt to start")
    return proc, found[0]


def _assert_whole_and_verified(setup: Setup, run_dir: Path) -> None:
    """Every trial has one result, finished once; the journal's hashes hold; verify passes."""
    results = sorted((run_dir / "results").rglob("*.json"))
    assert len(results) == PLANNED
    assert Counter(json.loads(p.read_text())["outcome"] for p in results) == {"passed": PLANNED}
    finals = [e for e in _events(run_dir, AttemptFinished) if e.outcome == "passed"]
    assert sorted(Counter(e.key for e in finals).values()) == [1] * PLANNED
    for event in finals:
        assert sha256_file(run_dir / str(event.result)) == event.result_sha256
    verified = cli("verify", str(run_dir), cwd=setup.root)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_two_resumes_at_once_one_proceeds_and_the_other_is_refused_naming_it(
    setup: Setup,
) -> None:
    runner, run_dir = _running_run(setup)
    runner.send_signal(signal.SIGINT)
    assert runner.wait(timeout=180) == 130, setup.stderr(runner)
    assert _events(run_dir, AttemptFinished)  # the attempts in flight, kept as interrupted

    first = setup.start("resume", str(run_dir))
    second = setup.start("resume", str(run_dir))
    began = time.monotonic()
    _wait_for(lambda: first.poll() is not None or second.poll() is not None, "a resume to end")
    refused_after = time.monotonic() - began
    refused, holder = (first, second) if first.poll() is not None else (second, first)
    # The holder is still inside its run (its agents wait for the gate): the refusal did
    # not wait for the lock, and it is the only one of the two to end.
    assert holder.poll() is None
    assert refused.returncode == RunInUse.exit_code
    message = setup.stderr(refused)
    assert f"is in use by pid {holder.pid} (pairbench resume)" in message, message
    assert "wait for it to finish or stop it" in message
    assert "free space or fix the disk" not in message
    # Startup of `python -m pairbench` included; the lock itself refuses in microseconds.
    assert refused_after < 60, refused_after

    setup.open_gate()
    assert holder.wait(timeout=300) == 0, setup.stderr(holder)
    assert len(_events(run_dir, RunResumed)) == 1  # the refused one wrote nothing
    info = read_run_info(RunDir.open(run_dir))  # invocations and status: journal events
    assert [i.command for i in info.invocations] == ["run", "resume"]
    assert info.status == "complete"
    _assert_whole_and_verified(setup, run_dir)


def test_report_is_refused_while_run_writes_and_verify_still_reads(setup: Setup) -> None:
    runner, run_dir = _running_run(setup)

    report = cli("report", str(run_dir), cwd=setup.root)
    assert report.returncode == RunInUse.exit_code, report.stdout + report.stderr
    assert f"is in use by pid {runner.pid} (pairbench run)" in _unwrapped(report.stderr)
    assert not (run_dir / "report.md").exists()
    resume = cli("resume", str(run_dir), cwd=setup.root)
    assert resume.returncode == RunInUse.exit_code, resume.stdout + resume.stderr
    assert f"pid {runner.pid} (pairbench run)" in _unwrapped(resume.stderr)
    verified = cli("verify", str(run_dir), cwd=setup.root)  # a reader: no lock
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert runner.poll() is None

    setup.open_gate()
    assert runner.wait(timeout=300) == 0, setup.stderr(runner)
    assert (run_dir / "report.md").is_file()  # written by the run, under its lock
    assert cli("report", str(run_dir), cwd=setup.root).returncode == 0  # free again
    _assert_whole_and_verified(setup, run_dir)


def test_sigkill_of_the_holder_releases_the_lock_and_a_new_resume_proceeds(
    setup: Setup,
) -> None:
    runner, run_dir = _running_run(setup)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait(timeout=60)

    resume = setup.start("resume", str(run_dir))
    _wait_for(
        lambda: resume.poll() is not None or bool(_events(run_dir, RunResumed)),
        "the resume to proceed or end",
    )
    assert resume.poll() is None, setup.stderr(resume)  # proceeding, not refused
    setup.open_gate()
    assert resume.wait(timeout=300) == 0, setup.stderr(resume)
    _assert_whole_and_verified(setup, run_dir)


# `pairbench run`, SIGKILLed by its own audit hook at the one rename that names the new
# run folder: the last moment before the run exists.
_KILL_AT_RENAME = """
import os, re, signal, sys

def kill_at_rename(event, args):
    if event == "os.rename" and re.match(r"^[.].+[.]tmp-[0-9]+$", os.path.basename(args[0])):
        os.kill(os.getpid(), signal.SIGKILL)

sys.addaudithook(kill_at_rename)
sys.argv = ["pairbench", *sys.argv[1:]]
from pairbench.cli import main
main()
"""


def test_a_run_killed_before_its_folder_is_named_leaves_no_half_run(setup: Setup) -> None:
    setup.open_gate()
    args = ["run", str(setup.experiment), "--runs-dir", str(setup.runs)]
    killed = subprocess.Popen(
        [sys.executable, "-c", _KILL_AT_RENAME, *args],
        cwd=setup.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, stderr = killed.communicate(timeout=300)
    assert killed.returncode == -signal.SIGKILL, stderr
    left = sorted(setup.runs.iterdir())
    assert [p.name.startswith(".") for p in left] == [True], left  # nothing under a run name
    staged = left[0]
    # Whole up to the rename: the plan and the lock, durable; the journal comes after it.
    info = json.loads((staged / "run.json").read_text(encoding="utf-8"))
    assert staged.name == f".{info['run_id']}.tmp-{killed.pid}"
    assert "status" not in info  # written once: the status is a journal event
    assert sorted(p.name for p in staged.iterdir()) == [".lock", "lock.json", "run.json"]

    resumed = cli("resume", str(staged), cwd=setup.root)
    assert resumed.returncode != 0
    assert "stopped before it started" in _unwrapped(resumed.stderr), resumed.stderr
    assert not (staged / "results").exists()

    # The next run clears the dead run's folder (no live process holds it) and runs whole.
    again = cli("run", str(setup.experiment), "--runs-dir", str(setup.runs), cwd=setup.root)
    assert again.returncode == 0, again.stdout + again.stderr
    assert not staged.exists()
    run_dir = setup.run_dir()
    assert run_dir is not None and sorted(setup.runs.iterdir()) == [run_dir]
    _assert_whole_and_verified(setup, run_dir)
