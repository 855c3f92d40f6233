"""The Ray executor on a local Ray: same results as the local executor, lost workers, Ctrl-C.

Every test that starts Ray shuts it down before it ends (the conftest guard fails a test
that leaves a process behind, Ray's daemons included).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from helpers.common import study_copy
from pairbench import load_run, resume_run, start_run
from pairbench._errors import RayExecutorError
from pairbench.freeze import verify_run
from pairbench.runner._ray import SHARED_LOOPBACK_ENV, check_executor, ray_options
from pairbench.spec import load_experiment
from pairbench.store import Journal, RunDir
from pairbench.store._events import AttemptStarted
from pairbench.store._load_run import read_run_info

pytestmark = pytest.mark.ray

if os.environ.get("CI") == "true":
    import ray  # CI installs the dev extra, which has ray: never skip there
else:
    ray = pytest.importorskip("ray", reason="ray is not installed: pip install 'pairbench[ray]'")

DEMO_TASKS = ("read-issue-title", "open-issue", "canary-comment")


@pytest.fixture
def local_ray() -> Iterator[None]:
    """A local Ray with 2 CPUs, as CI has; shut down (with its daemons) after the test.

    ``address="local"``: always a new Ray of its own, never the cluster another module's test
    (test_ray_nodes.py, on the other xdist worker) may have running at the same moment."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield
    finally:
        ray.shutdown()


def _trim_demo(tmp_path: Path) -> Path:
    """The demo study with 3 of its tasks (stdio, warm HTTP, a canary probe) x 2 trials."""
    path = study_copy(tmp_path)
    yaml = YAML()
    data = yaml.load(path.read_text(encoding="utf-8"))
    data["trials"] = 2
    data["tasks"] = [t for t in data["tasks"] if t["id"] in DEMO_TASKS]
    data.pop("hypotheses", None)  # H2 counts probe tasks this subset does not keep
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)
    # A cut-down copy is not the frozen protocol: under its lock every run would refuse.
    (path.parent / "experiment.lock.json").unlink()
    return path


def _comparable(result: Any) -> dict[str, Any]:
    """What must not depend on the executor (timings, paths and hashes aside)."""
    return {
        "seed": result.seed,
        "model_seed": result.model_seed,
        "attempt": result.attempt,
        "start_order": result.start_order,
        "outcome": result.outcome,
        "reason": result.reason,
        "final_answer": result.final_answer,
        "grade": result.grade.model_dump(mode="json") if result.grade else None,
        "security": result.security.model_dump(mode="json") if result.security else None,
        "validity": result.validity.model_dump(mode="json") if result.validity else None,
        "tool_calls": [c.tool for c in result.metrics.tool_calls] if result.metrics else None,
    }


def test_the_demo_on_ray_matches_the_local_executor(tmp_path: Path, local_ray: None) -> None:
    exp = _trim_demo(tmp_path)
    local = start_run(exp, tmp_path / "local", run_seed=7)
    on_ray = start_run(exp, tmp_path / "ray", run_seed=7, executor="ray")
    assert local.status == on_ray.status == "complete"
    assert len(on_ray.results) == 18  # 3 tasks x 2 trials x 3 arms
    info = {
        name: json.loads((outcome.run_dir / "run.json").read_text(encoding="utf-8"))
        for name, outcome in (("local", local), ("ray", on_ray))
    }
    assert info["ray"]["schedule"] == info["local"]["schedule"]
    assert info["ray"]["executor"] == {"name": "ray", "address": None}
    assert info["local"]["executor"] == {"name": "local", "address": None}
    expected = {(r.arm, r.task, r.trial): _comparable(r) for r in local.results}
    got = {(r.arm, r.task, r.trial): _comparable(r) for r in on_ray.results}
    assert got == expected
    assert {r.outcome for r in on_ray.results if r.arm != "baseline"} == {"passed"}
    assert verify_run(on_ray.run_dir) == []
    # the driver wrote the transcripts: one per result, hashed in the journal
    assert len(list((on_ray.run_dir / "transcripts").rglob("*.jsonl"))) == 18
    assert not list((on_ray.run_dir / "transcripts").rglob("*.partial"))

    # The infra policy too: a server that never starts is kept, retried once, then stops.
    broken = _broken_server_experiment(tmp_path / "broken")
    stopped = {
        name: start_run(broken, tmp_path / name / "runs", run_seed=1, executor=name)
        for name in ("local", "ray")
    }
    assert stopped["ray"].status == stopped["local"].status
    assert stopped["ray"].status.startswith("stopped: trial ")
    kept = {
        name: sorted(
            p.relative_to(o.run_dir).as_posix() for p in (o.run_dir / "infra").rglob("*.json*")
        )
        for name, o in stopped.items()
    }
    assert kept["ray"] == kept["local"] and len(kept["ray"]) == 4  # 2 results, 2 transcripts
    assert verify_run(stopped["ray"].run_dir) == []


def _broken_server_experiment(root: Path) -> Path:
    root.mkdir()
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    (root / "plan.yaml").write_text("steps: []\nanswer: ok\n", encoding="utf-8")
    broken = {"mcp": {"srv": {"transport": "stdio", "command": ["/nonexistent/server"]}}}
    arms = json.dumps({"a": {"tools": broken}, "b": {"tools": broken}})
    path = root / "experiment.yaml"
    path.write_text(
        "id: broken\nversion: '1'\ntrials: 1\nbudget: {concurrency: 1}\n"
        f"agent: {{adapter: scripted}}\narms: {arms}\n"
        "tasks:\n  - {id: t0, prompt: p.md, plan: plan.yaml,"
        " grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    return path


KILL_PARENT_ONCE = (
    "import os, signal, sys; sys.stdin.read(); flag = sys.argv[1]\n"
    "if not os.path.exists(flag):\n"
    "    open(flag, 'w').close(); os.kill(os.getppid(), signal.SIGKILL); os._exit(0)\n"
    "print('ok')"
)


def _command_experiment(root: Path, script: str, *args: str, arm_a: str = "{}") -> Path:
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    agent = json.dumps(
        {"adapter": "command", "settings": {"command": ["python3", "-c", script, *args]}}
    )
    path = root / "experiment.yaml"
    path.write_text(
        "id: rayexec\nversion: '1'\ntrials: 1\n"
        f"agent: {agent}\narms: {{a: {arm_a}, b: {{}}}}\n"
        "tasks:\n  - {id: t0, prompt: p.md, grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    return path


def test_a_worker_killed_mid_attempt_is_infra_kept_and_retried(tmp_path: Path) -> None:
    # No ray.init here: the executor starts a local Ray itself and shuts it down after.
    flag = tmp_path / "killed-once"
    exp = _command_experiment(
        tmp_path,
        KILL_PARENT_ONCE,
        str(flag),
        arm_a="{resources: {num_cpus: 1, memory_mb: 256}}",
    )
    outcome = start_run(exp, tmp_path / "runs", run_seed=1, executor="ray")
    assert flag.exists(), "the agent never ran in a Ray worker"
    assert outcome.status == "complete"
    kept = sorted((outcome.run_dir / "infra").rglob("*.json"))
    assert len(kept) == 1, kept
    lost = json.loads(kept[0].read_text(encoding="utf-8"))
    assert lost["outcome"] == "infra" and lost["attempt"] == 1
    assert "Ray worker" in lost["reason"] and "WorkerCrashedError" in lost["reason"]
    # what the lost task streamed before it died is kept with it, hashed in the journal
    streamed = kept[0].with_suffix(".jsonl").read_text(encoding="utf-8")
    assert '"kind": "agent_start"' in streamed
    retried = {(r.arm, r.attempt, r.outcome) for r in outcome.results}
    assert ("a", 2, "passed") in retried and ("b", 1, "passed") in retried
    assert verify_run(outcome.run_dir) == []
    assert not ray.is_initialized()


def test_resources_map_to_ray_options(tmp_path: Path) -> None:
    exp = _command_experiment(
        tmp_path,
        "print('ok')",
        arm_a="{resources: {num_cpus: 0.5, num_gpus: 1, memory_mb: 512, custom: {tpu: 2}}}",
    )
    loaded = load_experiment(exp)
    assert ray_options(loaded.experiment.arms["a"]) == {
        "max_retries": 0,
        "retry_exceptions": False,
        "num_cpus": 0.5,
        "num_gpus": 1,
        "memory": 512 * 1024 * 1024,
        "resources": {"tpu": 2},
    }
    assert ray_options(loaded.experiment.arms["b"]) == {"max_retries": 0, "retry_exceptions": False}
    # an arm without resources keeps the experiment's canonical hash as it was
    plain = _command_experiment(tmp_path, "print('ok')")
    assert "resources" not in json.dumps(load_experiment(plain).experiment.model_dump(mode="json"))


def test_warm_servers_are_no_reason_to_refuse_a_remote_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each node starts its own warm servers (test_ray_nodes.py), or the user says the
    # driver's loopback is shared: either way the executor may run on a remote cluster.
    loaded = load_experiment(study_copy(tmp_path))  # remote-http has a warm HTTP server
    monkeypatch.delenv(SHARED_LOOPBACK_ENV, raising=False)
    check_executor(loaded, "ray", "ray://10.0.0.9:10001")
    monkeypatch.setenv(SHARED_LOOPBACK_ENV, "1")
    check_executor(loaded, "ray", "ray://10.0.0.9:10001")
    check_executor(loaded, "ray", None)


def test_a_missing_ray_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    exp = _command_experiment(tmp_path, "print('ok')")
    with pytest.raises(RayExecutorError, match=r"pip install 'pairbench\[ray\]'"):
        start_run(exp, tmp_path / "runs", executor="ray")
    with pytest.raises(RayExecutorError, match="unknown executor"):
        start_run(exp, tmp_path / "runs", executor="dask")


HOLD_WHILE_FLAG = (
    "import os, sys, time; sys.stdin.read()\n"
    "while os.path.exists(sys.argv[1]):\n    time.sleep(0.05)\n"
    "print('ok')"
)


def test_ctrl_c_cancels_ray_tasks_as_interrupted_and_resume_reuses_ray(tmp_path: Path) -> None:
    hold = tmp_path / "hold"  # the agent waits while this file exists
    hold.touch()
    exp = _command_experiment(tmp_path, HOLD_WHILE_FLAG, str(hold))
    runs = tmp_path / "runs"
    # Its own session and process group, as a terminal's foreground job: Ctrl-C is SIGINT
    # to the whole group (pairbench and Ray's daemons; the workers have groups of their own).
    argv = ["run", str(exp), "--runs-dir", str(runs), "--executor", "ray"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairbench", *argv],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        started = False
        while time.monotonic() < deadline and not started:
            dirs = list(runs.glob("rayexec-*")) if runs.exists() else []
            events = Journal.read(dirs[0] / "journal.jsonl") if dirs else []
            started = any(isinstance(e, AttemptStarted) for e in events)
            time.sleep(0.1)
        assert started, "no attempt started"

        # The driver journals a start before Ray has a worker for the task; on a loaded
        # machine that takes seconds, and a cancel before it leaves no transcript. Wait
        # until every started attempt's worker streams its agent running.
        def running() -> bool:
            events = Journal.read(dirs[0] / "journal.jsonl")
            began = [e for e in events if isinstance(e, AttemptStarted)]
            streamed = list((dirs[0] / "work" / "_ray").glob("*/*/*/transcript.jsonl"))
            agents = [p for p in streamed if b'"agent_start"' in p.read_bytes()]
            return len(agents) == len(began)

        while time.monotonic() < deadline and not running():
            time.sleep(0.1)
        assert running(), "no worker streamed its agent's start"
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    run_dir = next(runs.glob("rayexec-*"))
    assert read_run_info(RunDir.open(run_dir)).status == "interrupted"
    kept = list((run_dir / "interrupted").rglob("*.json"))
    assert kept, "the in-flight attempt was not kept as interrupted"
    for record in kept:
        assert '"kind": "agent_start"' in record.with_suffix(".jsonl").read_text(encoding="utf-8")
    assert not list((run_dir / "infra").rglob("*.json")), "Ctrl-C looked like a lost worker"
    assert verify_run(run_dir) == []
    info = json.loads((run_dir / "run.json").read_text())
    assert info["executor"] == {"name": "ray", "address": None}
    hold.unlink()
    finished = resume_run(run_dir)  # reuses the recorded executor: Ray
    assert finished.status == "complete"
    assert {r.outcome for r in finished.results} == {"passed"}
    invocations = read_run_info(RunDir.open(run_dir)).invocations
    assert [i.executor for i in invocations] == ["ray", "ray"]
    assert load_run(run_dir).results
