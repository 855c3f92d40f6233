"""One writer per run: the ``flock`` on ``<run>/.lock``, against real second processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pairbench._errors import PairbenchError, RunDirError, RunInUse
from pairbench.store import RunDir
from pairbench.store._lock import LOCK_NAME, hold_writer_locks, writer_lock

# A second process that holds a run's lock until its stdin closes.
_HOLD = """
import sys
from pathlib import Path
from pairbench.store._lock import writer_lock
with writer_lock(Path(sys.argv[1]), sys.argv[2]):
    print("locked", flush=True)
    sys.stdin.read()
"""

# A second process that tries the lock once, with bare flock (no pairbench import, so it
# starts fast): exit 0 if it got it, 1 if another process holds it.
_PROBE = """
import fcntl, os, sys
fd = os.open(os.path.join(sys.argv[1], ".lock"), os.O_RDWR | os.O_CREAT)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    sys.exit(1)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A live process holding ``tmp_path``'s lock as ``pairbench resume``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(tmp_path), "pairbench resume"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "locked\n"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None and not pipe.closed:
            pipe.close()


def _locked_elsewhere(path: Path) -> bool:
    """Whether a fresh process is refused the lock of ``path``."""
    probe = subprocess.run([sys.executable, "-c", _PROBE, str(path)], timeout=120, check=False)
    assert probe.returncode in (0, 1)
    return probe.returncode == 1


def _note(path: Path) -> tuple[int, str]:
    data = json.loads((path / LOCK_NAME).read_text(encoding="utf-8"))
    return int(data["pid"]), str(data["command"])


def test_run_in_use_is_a_pairbench_error_with_its_own_exit_code() -> None:
    assert issubclass(RunInUse, PairbenchError)
    assert not issubclass(RunInUse, RunDirError)
    assert RunInUse.exit_code not in (0, 1, 2)


def test_a_second_writer_is_refused_at_once_naming_the_holder(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    began = time.monotonic()
    with pytest.raises(RunInUse) as refused, writer_lock(tmp_path, "pairbench report"):
        pass  # pragma: no cover - never reached
    elapsed = time.monotonic() - began
    assert str(refused.value) == (
        f"{tmp_path} is in use by pid {holder.pid} (pairbench resume); "
        "wait for it to finish or stop it, then try again"
    )
    assert elapsed < 2.0  # refused, not queued behind the holder
    assert holder.poll() is None  # and the holder is untouched


def test_the_lock_is_free_again_once_its_holder_ends(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    assert holder.wait(timeout=60) == 0
    with writer_lock(tmp_path, "pairbench resume"):
        pass
    # A clean release leaves no holder named in the file.
    assert (tmp_path / LOCK_NAME).read_text(encoding="utf-8") == ""


def test_sigkill_of_the_holder_releases_the_lock(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=60)
    # The dead holder's note is still in the file; the kernel has dropped its lock anyway.
    assert _note(tmp_path) == (holder.pid, "pairbench resume")
    with writer_lock(tmp_path, "pairbench resume"):
        assert _note(tmp_path) == (os.getpid(), "pairbench resume")


def test_a_writer_may_call_another_writer_of_the_same_run(tmp_path: Path) -> None:
    with writer_lock(tmp_path, "pairbench run"):
        with writer_lock(tmp_path, "pairbench report"):
            assert _locked_elsewhere(tmp_path)
            assert _note(tmp_path) == (os.getpid(), "pairbench run")  # the outer writer's
        # The inner block's end does not release the outer writer's lock.
        assert _locked_elsewhere(tmp_path)
    assert not _locked_elsewhere(tmp_path)


def test_hold_writer_locks_keeps_a_lock_until_the_scope_ends(tmp_path: Path) -> None:
    with hold_writer_locks():
        with writer_lock(tmp_path, "pairbench run"):
            pass
        # Between start_run's return and the report: still held.
        assert _locked_elsewhere(tmp_path)
        with writer_lock(tmp_path, "pairbench report"):
            pass
        assert _locked_elsewhere(tmp_path)
    assert not _locked_elsewhere(tmp_path)


def test_a_new_run_folder_appears_under_its_name_only_whole_and_locked(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    files = {"run.json": b'{"run_id": "r1"}\n', "lock.json": b"{}\n"}
    with RunDir.create_locked(runs, "r1", files, command="pairbench run") as run_dir:
        assert run_dir.path == (runs / "r1").absolute()
        assert sorted(p.name for p in runs.iterdir()) == ["r1"]  # the staging name is gone
        inside = sorted(p.name for p in run_dir.path.iterdir())
        assert inside == [LOCK_NAME, "lock.json", "run.json"]
        assert run_dir.read_run_json() == {"run_id": "r1"}
        # The lock taken on the staging folder moved with the rename.
        assert _locked_elsewhere(run_dir.path)
        assert _note(run_dir.path) == (os.getpid(), "pairbench run")
        with run_dir.writer_lock("pairbench report"):  # re-entrant by the folder's inode
            pass
        assert _locked_elsewhere(run_dir.path)
    assert not _locked_elsewhere(runs / "r1")
    with pytest.raises(RunDirError, match="already exists"):
        RunDir.create(runs, "r1")


def test_a_failure_before_the_rename_leaves_no_folder(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    # The second file cannot be written (its parent is a file): nothing may be left.
    files = {"run.json": b"{}\n", "run.json/inner": b""}
    with (
        pytest.raises(OSError),
        RunDir.create_locked(runs, "r1", files, command="pairbench run"),
    ):
        pass  # pragma: no cover - creation fails first
    assert list(runs.iterdir()) == []


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_clear_abandoned_removes_only_unstarted_folders_no_live_process_owns(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    dead = _dead_pid()
    abandoned = runs / f".exp-1.tmp-{dead}"
    abandoned.mkdir()
    (abandoned / "run.json").write_text("{}", encoding="utf-8")
    mid_creation = runs / f".exp-2.tmp-{os.getpid()}"  # a live process's, not yet renamed
    mid_creation.mkdir()
    locked = runs / f".exp-3.tmp-{dead}"  # named for a dead pid, but a live process holds it
    locked.mkdir()
    started = runs / "exp-4"
    started.mkdir()
    with writer_lock(locked, "pairbench run"):
        holder = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; from pairbench.store import RunDir;"
                "print([p.name for p in RunDir.clear_abandoned(Path(sys.argv[1]))])",
                str(runs),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    assert holder.stdout.strip() == str([abandoned.name])
    assert sorted(p.name for p in runs.iterdir()) == sorted(
        [mid_creation.name, locked.name, started.name]
    )


def test_an_unstarted_folder_is_never_opened_as_a_run(tmp_path: Path) -> None:
    staged = tmp_path / f".exp-1.tmp-{_dead_pid()}"
    staged.mkdir()
    (staged / "run.json").write_text("{}", encoding="utf-8")
    assert RunDir.is_unstarted(staged) and not RunDir.is_unstarted(tmp_path / "exp-1")
    with pytest.raises(RunDirError, match="stopped before it started"):
        RunDir.open(staged)
