"""``build``: outputs hashed into the record, a failure shows its log's end, and a build past
its timeout is killed with every process it started."""

from __future__ import annotations

import ast
import hashlib
import os
import sys
import time
from pathlib import Path

import psutil
import pytest

from pairbench.source import BuildFailed, BuildSpec, build

WRITE = (
    "import os, pathlib, sys; v = pathlib.Path(sys.argv[1]); v.mkdir(); "
    "(v / 'env.txt').write_text(repr(dict(os.environ))); (v / 'x.txt').write_text('x')"
)


def test_a_build_is_recorded_with_its_outputs_hash_and_a_scrubbed_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET", "leaked")
    monkeypatch.setenv("ALLOWED", "yes")
    worktree, venv = tmp_path / "wt", tmp_path / "arm.venv"
    worktree.mkdir()
    spec = BuildSpec(command=["python3", "-c", WRITE, "{venv}"], outputs=["{venv}/*.txt"])
    record = build(worktree, spec, venv, env_allow=["ALLOWED"])
    assert record.argv == [sys.executable, "-c", WRITE, str(venv)]
    assert record.exit_code == 0 and record.output_files == 2
    env = ast.literal_eval((venv / "env.txt").read_text())
    assert env["PIP_NO_INDEX"] == "1" and env["ALLOWED"] == "yes" and "SECRET" not in env
    assert env["HOME"] != os.environ["HOME"] and not Path(env["HOME"]).exists()  # a temp dir
    expected = hashlib.sha256()
    for name in ("env.txt", "x.txt"):
        digest = hashlib.sha256((venv / name).read_bytes()).hexdigest()
        expected.update(f"{{venv}}/{name}\x00100644\x00{digest}\n".encode())
    assert record.outputs_sha256 == expected.hexdigest()
    assert Path(record.log) == tmp_path / "arm.venv.build.log"


def test_a_failing_build_raises_with_its_log_tail(tmp_path: Path) -> None:
    script = "import sys; [print(f'line {i}') for i in range(30)]; sys.exit(3)"
    spec = BuildSpec(command=["python3", "-c", script], timeout_s=60)
    with pytest.raises(BuildFailed, match=r"exited with code 3") as caught:
        build(tmp_path, spec, tmp_path / "venv")
    message = str(caught.value)
    assert "  | line 29" in message and "  | line 10" in message and "line 9\n" not in message


def test_a_declared_output_that_is_missing_fails_the_build(tmp_path: Path) -> None:
    spec = BuildSpec(command=["python3", "-c", "print('built nothing')"], outputs=["{venv}/**"])
    with pytest.raises(BuildFailed, match=r"output '\{venv\}/\*\*' matched no file"):
        build(tmp_path, spec, tmp_path / "venv")


def _gone(pid: int, within_s: float = 10.0) -> bool:
    """Whether ``pid`` is gone within ``within_s``: a SIGKILLed process dies when the kernel
    next schedules it, which on a loaded machine can be after the kill call returned."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                proc.wait(0)  # pytest is a subreaper (conftest): an orphan's zombie is ours to reap
        except (psutil.NoSuchProcess, psutil.TimeoutExpired):
            pass
        if not psutil.pid_exists(pid) or time.monotonic() > deadline:
            return not psutil.pid_exists(pid)
        time.sleep(0.05)


def test_a_build_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    spec = BuildSpec(command=["sh", "-c", f"sleep 300 & echo $$ $! > {pids}; wait"], timeout_s=1.0)
    with pytest.raises(BuildFailed, match="timed out after 1 s"):
        build(tmp_path, spec, tmp_path / "venv")
    shell, sleeper = (int(p) for p in pids.read_text().split())
    assert _gone(shell) and _gone(sleeper)
