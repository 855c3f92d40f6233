"""The local executor in-process: attempt slots, durable order of records, shared fsyncs, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from helpers.common import checkout_env, events_of
from pairbench import start_run
from pairbench.agents._scripted import ScriptedAgent
from pairbench.freeze import verify_run
from pairbench.runner._progress import RunProgress
from pairbench.store import Journal, RunDir, sha256_file
from pairbench.store._events import AttemptFinished, AttemptStarted
from pairbench.store._load_run import read_run_info


def _experiment(root: Path, agent: dict[str, Any], *, tasks: int, trials: int, slots: int) -> Path:
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    (root / "plan.yaml").write_text("steps: []\nwithout_tools: ok\n", encoding="utf-8")
    expect = "PASS" if agent["adapter"] == "simulated" else "ok"
    listed = "\n".join(
        f"  - {{id: t{i}, prompt: p.md, plan: plan.yaml, "
        f"grader: {{name: exact-answer, args: {{expect: {expect}}}}}}}"
        for i in range(tasks)
    )
    path = root / "experiment.yaml"
    path.write_text(
        f"id: exec\nversion: '1'\ntrials: {trials}\n"
        f"budget: {{trial_timeout_s: 60, concurrency: {slots}}}\n"
        f"agent: {json.dumps(agent)}\narms: {{a: {{}}, b: {{}}}}\ntasks:\n{listed}\n",
        encoding="utf-8",
    )
    return path


def _sleeper(seconds: float) -> dict[str, Any]:
    """The simulated agent, always passing after exactly ``seconds`` of real time."""
    latency = {"median": seconds * 1000, "sigma": 0}
    return {
        "adapter": "simulated",
        "settings": {
            "success": {"a": 1.0, "b": 1.0},
            "latency_ms": {"a": latency, "b": latency},
            "realtime": True,
        },
    }


def _at(stamp: str | None) -> float:
    assert stamp is not None
    return datetime.fromisoformat(stamp).timestamp()


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    now = most = 0
    for _, step in edges:  # an end sorts before a start at the same instant
        now += step
        most = max(most, now)
    return most


def test_concurrency_counts_attempts_and_a_pairs_arms_stay_in_planned_order(
    tmp_path: Path,
) -> None:
    sleep = 0.5
    exp = _experiment(tmp_path, _sleeper(sleep), tasks=1, trials=3, slots=2)
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    assert outcome.status == "complete"
    results = outcome.results
    assert len(results) == 6 and {r.outcome for r in results} == {"passed"}
    spans = [(_at(r.started_at), _at(r.ended_at)) for r in results]
    assert _most_at_once(spans) == 2  # attempts in flight never exceed the limit

    pairs: dict[int, list[Any]] = {}
    for r in results:
        pairs.setdefault(r.trial, []).append(r)
    for arms in pairs.values():
        first, second = sorted(arms, key=lambda r: _at(r.started_at))
        assert (first.start_order, second.start_order) == (0, 1)  # the planned order
        assert _at(second.started_at) >= _at(first.ended_at)  # one after the other
    # A slot a pair frees between its arms goes to another pair: three pairs are open at
    # once with two slots, which a limit on pairs in flight would never allow.
    pair_spans = [
        (min(_at(r.started_at) for r in arms), max(_at(r.ended_at) for r in arms))
        for arms in pairs.values()
    ]
    assert _most_at_once(pair_spans) == 3
    # 6 attempts of `sleep` on 2 slots: 3 x sleep; two pairs at a time would need 4 x.
    assert max(e for _, e in spans) - min(s for s, _ in spans) < 4 * sleep


class _Recorder:
    """fsync, link, replace and journal writes of the whole process, in call order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, journal_fsync_s: float = 0.0) -> None:
        self.events: list[tuple[Any, ...]] = []
        real_fsync, real_link, real_replace, real_write = os.fsync, os.link, os.replace, os.write

        def fsync(fd: int) -> None:
            path = os.readlink(f"/proc/self/fd/{fd}")
            if journal_fsync_s and path.endswith("journal.jsonl"):
                time.sleep(journal_fsync_s)  # a slow disk: attempts finish while it syncs
            real_fsync(fd)
            self.events.append(("fsync", path))

        def link(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            real_link(src, dst, *args, **kwargs)
            self.events.append(("link", os.path.realpath(src), os.path.realpath(dst)))

        def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            self.events.append(("replace", os.path.realpath(src), os.path.realpath(dst)))
            real_replace(src, dst, *args, **kwargs)

        def write(fd: int, data: Any) -> int:
            path = os.readlink(f"/proc/self/fd/{fd}")
            if path.endswith("journal.jsonl"):
                self.events.append(("write", path, bytes(data)))
            return real_write(fd, data)

        real_run, real_done = ScriptedAgent.run, RunProgress.advance_done

        async def run(agent: ScriptedAgent, ctx: Any) -> Any:
            self.events.append(("agent", f"{ctx.arm}/{ctx.task}/{ctx.trial}"))
            return await real_run(agent, ctx)

        def advance_done(progress: RunProgress, outcome: str, *, already: bool = False) -> None:
            self.events.append(("done", outcome))
            real_done(progress, outcome, already=already)

        fakes = {"fsync": fsync, "link": link, "replace": replace, "write": write}
        for name, fake in fakes.items():
            monkeypatch.setattr(os, name, fake)
        monkeypatch.setattr(ScriptedAgent, "run", run)
        monkeypatch.setattr(RunProgress, "advance_done", advance_done)

    def index(self, *match: Any, after: int = -1) -> int:
        for i, event in enumerate(self.events):
            if i > after and event[: len(match)] == match:
                return i
        raise AssertionError(f"no {match} after event {after}")

    def journal_lines(self) -> list[tuple[int, dict[str, Any]]]:
        return [
            (i, json.loads(raw))
            for i, event in enumerate(self.events)
            if event[0] == "write"
            for raw in event[2].splitlines()
        ]


def test_the_collector_is_tuned_while_attempts_run_and_as_before_afterwards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import gc

    from pairbench._collector import YOUNG_COLLECTION_EVERY

    while_running: list[tuple[int, tuple[int, int, int]]] = []
    real_run = asyncio.run

    def run(main: Any) -> Any:
        while_running.append((gc.get_freeze_count(), gc.get_threshold()))
        return real_run(main)

    monkeypatch.setattr(asyncio, "run", run)
    before = gc.get_threshold()
    exp = _experiment(tmp_path, {"adapter": "scripted"}, tasks=1, trials=1, slots=1)
    assert start_run(exp, tmp_path / "runs", run_seed=1).status == "complete"
    (frozen, thresholds), *_ = while_running
    assert frozen > 1000  # modules, models, the plan: out of the collector's sight
    assert thresholds == (YOUNG_COLLECTION_EVERY, *before[1:])
    # A test session's garbage is collected as before.
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_files_are_durable_before_their_journal_line_and_lines_before_the_attempt_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exp = _experiment(tmp_path, {"adapter": "scripted"}, tasks=3, trials=2, slots=3)
    rec = _Recorder(monkeypatch)
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    monkeypatch.undo()
    assert outcome.status == "complete" and len(outcome.results) == 12
    run_dir = Path(os.path.realpath(outcome.run_dir))
    journal = str(run_dir / "journal.jsonl")
    finished_durable = []
    for written, line in rec.journal_lines():
        durable = rec.index("fsync", journal, after=written)
        if line["event"] == "attempt_started":
            # The start is on disk before the agent runs: a crash cannot hide an attempt.
            assert durable < rec.index("agent", line["key"])
        if line["event"] != "attempt_finished":
            continue
        finished_durable.append(durable)
        for field, move in (("result", "link"), ("transcript", "replace")):
            target = str(run_dir / line[field])
            placed = next(i for i, e in enumerate(rec.events) if e[0] == move and e[2] == target)
            source = rec.events[placed][1]
            assert rec.index("fsync", source) < placed  # the bytes, then the name
            folder = rec.index("fsync", os.path.dirname(target), after=placed)
            assert folder < written  # the name, then the line naming it
            assert sha256_file(Path(target)) == line[f"{field}_sha256"]
    dones = [i for i, e in enumerate(rec.events) if e[0] == "done"]
    assert len(dones) == len(finished_durable) == 12
    for nth, done in enumerate(dones):
        assert sorted(finished_durable)[nth] < done  # counted only once its line is durable


def test_attempts_that_finish_together_share_journal_fsyncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exp = _experiment(tmp_path, {"adapter": "scripted"}, tasks=3, trials=2, slots=4)
    rec = _Recorder(monkeypatch, journal_fsync_s=0.03)
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    monkeypatch.undo()
    assert outcome.status == "complete"
    journal = os.path.realpath(outcome.run_dir / "journal.jsonl")
    lines = len(rec.journal_lines())
    fsyncs = sum(1 for e in rec.events if e == ("fsync", journal))
    assert lines == 1 + 2 * 12 + 1  # run_started, each attempt started and finished, run_ended
    # One fsync per line (no group commit) would be 26; shared, far fewer.
    assert fsyncs * 2 <= lines, (fsyncs, lines)


def test_ctrl_c_keeps_the_attempts_in_flight_as_durable_interrupted_records(
    tmp_path: Path,
) -> None:
    exp = _experiment(tmp_path, _sleeper(30), tasks=1, trials=3, slots=2)
    runs = tmp_path / "runs"

    def agent_runs(run_dir: Path, label: str, attempt: int) -> bool:
        arm, task, trial = label.rsplit("/", 2)
        partial = run_dir / "transcripts" / arm / task / f"{trial}.{attempt}.partial"
        return partial.is_file() and '"kind": "agent_start"' in partial.read_text("utf-8")

    def interrupt_once_two_agents_run() -> None:
        # A started line is durable before its attempt makes its transcript (a crash must
        # never hide an attempt), so it does not mean a transcript exists yet: an attempt
        # interrupted then is rightly kept without one. Wait for both agents to be running.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            dirs = list(runs.glob("exec-*")) if runs.exists() else []
            events = Journal.read(dirs[0] / "journal.jsonl") if dirs else []
            started = [(e.key, e.attempt) for e in events_of(events, AttemptStarted)]
            if len(started) >= 2 and all(agent_runs(dirs[0], *s) for s in started):
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.02)

    watcher = threading.Thread(target=interrupt_once_two_agents_run)
    watcher.start()
    started = time.monotonic()
    outcome = start_run(exp, runs, run_seed=1)
    watcher.join()
    assert outcome.status == "interrupted"
    assert time.monotonic() - started < 30  # the agents were stopped, not waited for
    events = Journal.read(outcome.run_dir / "journal.jsonl")
    begun = {(e.key, e.attempt) for e in events_of(events, AttemptStarted)}
    ended = {
        (e.key, e.attempt): e
        for e in events_of(events, AttemptFinished)
        if e.outcome == "interrupted"
    }
    assert len(begun) == 2 and set(ended) == begun  # journaled before start_run returned
    for line in ended.values():
        assert line.result is not None and line.transcript is not None
        assert sha256_file(outcome.run_dir / line.result) == line.result_sha256
        assert sha256_file(outcome.run_dir / line.transcript) == line.transcript_sha256
    assert not list(outcome.run_dir.rglob("*.partial")) and not list(outcome.run_dir.rglob("*.tmp"))


_FULL_DISK = """
import errno, sys
from pairbench.store import _commit
real, calls = _commit.GroupCommitter._put, [0]
def full_disk(file):
    calls[0] += 1
    if calls[0] >= 3:  # from the third record on, the disk stays full
        raise OSError(errno.ENOSPC, "No space left on device", str(file.path))
    real(file)
_commit.GroupCommitter._put = staticmethod(full_disk)
from pairbench.cli import main
sys.argv = ["pairbench", *sys.argv[1:]]
main()
"""


def test_a_disk_error_while_committing_stops_the_run_with_a_fix_and_resume_finishes_it(
    tmp_path: Path,
) -> None:
    # The real CLI in a child whose disk fills up after two records: attempts in flight
    # when the run stops queue `interrupted` records that fail too, and each failure once
    # printed asyncio's "Future exception was never retrieved" traceback after the error.
    exp = _experiment(tmp_path, _sleeper(0.05), tasks=3, trials=2, slots=2)
    runs = tmp_path / "runs"
    env = checkout_env()
    run = [sys.executable, "-c", _FULL_DISK, "run", str(exp), "--runs-dir", str(runs)]
    stopped = subprocess.run([*run, "--run-seed", "1"], capture_output=True, text=True, env=env)
    assert stopped.returncode != 0
    errors = stopped.stderr.strip().splitlines()
    assert len(errors) == 1, stopped.stderr  # the one error, and nothing after it
    assert "storing the run's records failed" in errors[0] and "pairbench resume" in errors[0]
    assert "Traceback" not in stopped.stderr and "never retrieved" not in stopped.stderr
    run_dir = next(runs.iterdir())
    status = read_run_info(RunDir.open(run_dir)).status  # a journal event, not run.json
    assert status.startswith("stopped: storing the run's records failed")
    # Space freed: the resume (the real CLI, without the fault) finishes the run.
    resumed = subprocess.run(
        [sys.executable, "-m", "pairbench", "resume", str(run_dir)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr
    assert read_run_info(RunDir.open(run_dir)).status == "complete"
    assert verify_run(run_dir) == []


def test_in_process_adapters_get_no_work_folders_and_command_agents_do(tmp_path: Path) -> None:
    # A subprocess agent needs its private HOME and TMPDIR to exist; an in-process adapter
    # (uses_workdir = False) never starts a process, so its attempts skip the folders.
    (tmp_path / "scripted").mkdir()
    (tmp_path / "command").mkdir()
    scripted = _experiment(
        tmp_path / "scripted", {"adapter": "scripted"}, tasks=1, trials=2, slots=2
    )
    done = start_run(scripted, tmp_path / "scripted" / "runs", run_seed=1)
    assert done.status == "complete" and all(r.outcome == "passed" for r in done.results)
    assert not (done.run_dir / "work").exists()
    check = (
        "import os; print('ok' if os.path.isdir(os.environ['HOME']) "
        "and os.path.isdir(os.environ['TMPDIR']) else 'missing')"
    )
    command = {"adapter": "command", "settings": {"command": [sys.executable, "-c", check]}}
    ran = start_run(
        _experiment(tmp_path / "command", command, tasks=1, trials=2, slots=2),
        tmp_path / "command" / "runs",
        run_seed=1,
    )
    assert ran.status == "complete"
    answers = [(r.outcome, r.final_answer, r.reason) for r in ran.results]
    assert [a[1] for a in answers] == ["ok"] * 4, answers


def test_a_command_agent_is_told_which_trial_it_runs(tmp_path: Path) -> None:
    # The agent reads its task, trial and attempt from the environment, not from its prompt.
    said = (
        "import os; print('|'.join(os.environ[k] for k in ('PAIRBENCH_RUN_ID', "
        "'PAIRBENCH_ARM', 'PAIRBENCH_TASK', 'PAIRBENCH_TRIAL', 'PAIRBENCH_ATTEMPT')))"
    )
    command = {"adapter": "command", "settings": {"command": [sys.executable, "-c", said]}}
    ran = start_run(
        _experiment(tmp_path, command, tasks=2, trials=2, slots=2), tmp_path / "runs", run_seed=1
    )
    assert ran.status == "complete"
    told = sorted(str(r.final_answer) for r in ran.results)
    expected = sorted(f"{ran.run_id}|{r.arm}|{r.task}|{r.trial}|1" for r in ran.results)
    assert told == expected and len(set(told)) == 8, told


def test_a_staggered_second_worker_starts_its_first_attempt_later(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, _sleeper(0.2), tasks=2, trials=1, slots=2)
    text = exp.read_text(encoding="utf-8").replace(
        "concurrency: 2}", "concurrency: 2, start_stagger_s: 1.5}"
    )
    one_arm = text.replace("arms: {a: {}, b: {}}", "descriptive: true\narms: {a: {}}")
    exp.write_text(one_arm, encoding="utf-8")
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    assert outcome.status == "complete"
    starts = sorted(_at(r.started_at) for r in outcome.results)
    ends = sorted(_at(r.ended_at) for r in outcome.results)
    # With two slots and no stagger both attempts would start together; the first worker
    # finishes its first attempt and takes the second before the staggered slot opens.
    assert starts[1] >= ends[0]
    assert ends[1] - starts[0] < 1.4


def test_a_stagger_longer_than_the_run_never_holds_it_up(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, _sleeper(0.5), tasks=3, trials=1, slots=2)
    text = exp.read_text(encoding="utf-8").replace(
        "concurrency: 2}", "concurrency: 2, start_stagger_s: 0.6}"
    )
    one_arm = text.replace("arms: {a: {}, b: {}}", "descriptive: true\narms: {a: {}}")
    exp.write_text(one_arm, encoding="utf-8")
    outcome = start_run(exp, tmp_path / "runs", run_seed=1)
    starts = sorted(_at(r.started_at) for r in outcome.results)
    spans = [(_at(r.started_at), _at(r.ended_at)) for r in outcome.results]
    assert outcome.status == "complete"
    assert starts[1] - starts[0] >= 0.5  # the second slot opened 0.6 s after the first
    assert _most_at_once(spans) == 2  # and once open, two ran together


@pytest.mark.parametrize("slots", [1, 2])
def test_an_infra_retry_runs_next_so_the_second_infra_stop_comes_on_the_same_trial(
    tmp_path: Path, slots: int
) -> None:
    # Arm b is in no success table: every attempt of it is infrastructure. Its first
    # trial's retry must run in the slot it failed in, before any other trial starts in
    # that slot, so the run stops after that trial's second failure, not after one failure
    # on each trial queued ahead of the retry.
    agent = {"adapter": "simulated", "settings": {"success": {"a": 1.0}}}
    exp = _experiment(tmp_path, agent, tasks=4, trials=2, slots=slots)
    outcome = start_run(exp, tmp_path / "runs", run_seed=3)
    assert "failed for infrastructure reasons 2 times" in outcome.status
    events = events_of(Journal.read(outcome.run_dir / "journal.jsonl"), AttemptStarted)
    infra = sorted((outcome.run_dir / "infra").rglob("*.json"))
    failed = [json.loads(f.read_bytes()) for f in infra]
    labels = {f"{r['arm']}/{r['task']}/{r['trial']}" for r in failed}
    if slots == 1:
        assert len(failed) == 2 and len(labels) == 1
        retried = [i for i, e in enumerate(events) if e.attempt == 2]
        assert len(retried) == 1 and events[retried[0] - 1].key == events[retried[0]].key
    else:
        # The other slot may have one b attempt in flight when the first infra retry fails.
        assert len(failed) <= 3 and len(labels) <= 2


def test_a_host_that_froze_objects_itself_keeps_them_frozen_after_a_run(tmp_path: Path) -> None:
    import gc

    gc.freeze()  # as a pre-forking host does before it forks workers
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        exp = _experiment(tmp_path, {"adapter": "scripted"}, tasks=1, trials=1, slots=1)
        assert start_run(exp, tmp_path / "runs", run_seed=1).status == "complete"
        # Not thawed by the run (a few of them may have died meanwhile), and none of the
        # run's own objects left frozen.
        assert 0.9 * frozen < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
