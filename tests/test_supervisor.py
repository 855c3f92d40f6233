"""The run's watchdog, on real processes: what it kills at EOF, and what it never kills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from pairbench import _supervisor
from pairbench._process import ENV_RUN_TOKEN, Supervisor, popen, supervised, terminate_group
from pairbench._supervisor import carriers

# Linux only (/proc); under CI=true (a Linux machine) it never skips, it runs or fails.
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") and os.environ.get("CI") != "true",
    reason="needs Linux /proc",
)

NULL = subprocess.DEVNULL


def _dead(pid: int, timeout_s: float = 5.0) -> bool:
    """Whether ``pid`` is gone or a zombie (reaped here if it is ours: pytest is a subreaper)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                os.waitpid(pid, os.WNOHANG)
                return True
        except (psutil.NoSuchProcess, ChildProcessError):
            return True
        time.sleep(0.02)
    return False


def _pid_from(path: Path, timeout_s: float = 10.0) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = path.read_text(encoding="utf-8").strip() if path.exists() else ""
        if text.endswith("."):
            return int(text[:-1])
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def test_eof_kills_a_registered_group_that_carries_no_token() -> None:
    supervisor = Supervisor.start()
    # Its own group, a scrubbed environment: only the registration can find it.
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 30 & sleep 30"], stdout=NULL, env={}, start_new_session=True
    )
    supervisor.watch(leader.pid)
    assert carriers(supervisor.token) == []
    supervisor.close()
    assert leader.wait(timeout=5) == -signal.SIGKILL


def test_a_forgotten_group_is_left_alone() -> None:
    supervisor = Supervisor.start()
    leader = subprocess.Popen(["sleep", "30"], stdout=NULL, env={}, start_new_session=True)
    supervisor.watch(leader.pid)
    supervisor.forget(leader.pid)
    supervisor.close()
    try:
        assert leader.poll() is None
    finally:
        leader.kill()
        leader.wait()


def test_a_setsid_grandchild_carrying_the_token_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    with supervised() as supervisor:
        assert supervisor is not None
        # The child leaves the group's reach: its grandchild starts a session of its own.
        child = popen(
            ["sh", "-c", f"setsid sh -c 'echo \"$$.\" > {pid_file}; exec sleep 30' &"],
            env={"PATH": os.environ["PATH"]},
            stdout=NULL,
        )
        grandchild = _pid_from(pid_file)
        assert child.wait(timeout=5) == 0
        terminate_group(child)  # what the runner does: the grandchild is not in that group
        assert os.getpgid(grandchild) != child.pid
        assert grandchild in carriers(supervisor.token)
    assert _dead(grandchild)


_RUNNER = textwrap.dedent(
    """\
    import os, subprocess, sys
    from pairbench._process import popen, supervised
    with supervised() as supervisor:
        popen(["sh", "-c", "setsid sleep 30 & sleep 30 & sleep 30"], env={"PATH": "/usr/bin:/bin"},
              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(supervisor.token, flush=True)
        sys.stdin.readline()
        os.kill(os.getpid(), 9)
    """
)


def test_a_sigkilled_runner_leaves_nothing_behind() -> None:
    runner = subprocess.Popen(
        [sys.executable, "-c", _RUNNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert runner.stdout is not None and runner.stdin is not None
    token = runner.stdout.readline().strip()
    deadline = time.monotonic() + 10
    while len(carriers(token)) < 3 and time.monotonic() < deadline:  # three sleeps (and sh)
        time.sleep(0.02)
    assert len(carriers(token)) >= 3
    runner.stdin.write("\n")
    runner.stdin.flush()
    assert runner.wait(timeout=10) == -signal.SIGKILL
    deadline = time.monotonic() + 5
    while carriers(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert carriers(token) == []


_PARENT = textwrap.dedent(
    """\
    import os, subprocess, sys
    token = os.environ["PAIRBENCH_RUN_TOKEN"]
    watchdog = subprocess.Popen(
        [sys.executable, "-I", "-S", sys.argv[1], token, str(os.getpid())],
        stdin=subprocess.PIPE, start_new_session=True,
    )
    watchdog.stdin.write(b"+%d\\n" % os.getpgid(0))   # even its own group, registered
    watchdog.stdin.close()
    watchdog.wait(timeout=20)
    print("alive")
    """
)


def test_the_parent_is_never_killed_even_when_it_carries_the_token() -> None:
    token = "0123456789abcdef"
    parent = subprocess.run(
        [sys.executable, "-c", _PARENT, _supervisor.__file__],
        env={**os.environ, ENV_RUN_TOKEN: token},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        start_new_session=True,
    )
    assert (parent.returncode, parent.stdout.strip()) == (0, "alive"), parent.stderr


def test_outside_a_supervised_block_children_get_no_token() -> None:
    proc = popen(["sleep", "30"], env={}, stdout=NULL)
    try:
        with open(f"/proc/{proc.pid}/environ", "rb") as handle:
            assert ENV_RUN_TOKEN.encode() not in handle.read()
    finally:
        terminate_group(proc)
