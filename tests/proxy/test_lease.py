"""SlotLease: one holder per model endpoint, across processes and within one; a crashed
holder's lease is free again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pairbench._errors import PairbenchError, SlotInUse
from pairbench.proxy import SlotLease

URL = "http://127.0.0.1:8080/v1"
HOLD = """
import sys
from pathlib import Path
from pairbench.proxy import SlotLease
lease = SlotLease(sys.argv[1], Path(sys.argv[2])).acquire()
print("held", flush=True)
sys.stdin.read()   # until the test closes stdin
lease.release()
"""


@contextmanager
def holder(directory: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lease until the block ends (or it is killed)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, URL, str(directory)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=10)


def test_a_lease_held_by_another_process_is_refused_naming_its_pid(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    with holder(tmp_path, server_env) as other:
        with pytest.raises(SlotInUse) as refused:
            SlotLease(URL, tmp_path).acquire()
        assert f"pid {other.pid}" in str(refused.value)
        assert "127.0.0.1:8080" in str(refused.value)
        assert isinstance(refused.value, PairbenchError)
    with SlotLease(URL, tmp_path) as lease:  # released when the other finished
        assert lease.held
        assert lease.path.read_text() == f"{os.getpid()}\n"


def test_a_second_lease_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with SlotLease(URL, tmp_path):
        with pytest.raises(SlotInUse, match=f"pid {os.getpid()}"):
            SlotLease("http://127.0.0.1:8080", tmp_path).acquire()  # same endpoint, no /v1
        with SlotLease("http://127.0.0.1:8081", tmp_path) as other:  # another endpoint
            assert other.held
    with SlotLease(URL, tmp_path) as again:
        assert again.held


def test_every_spelling_of_one_server_shares_one_lease(tmp_path: Path) -> None:
    # The motivated operator: a second run on the same one-slot server, spelled otherwise.
    with SlotLease("http://127.0.0.1:18190", tmp_path) as first:
        for spelling in (
            "http://localhost:18190/v1",
            "http://LOCALHOST:18190",
            "http://[::1]:18190",
        ):
            with pytest.raises(SlotInUse, match="loopback:18190"):
                SlotLease(spelling, tmp_path).acquire()
        assert first.path.name == "slot-loopback-18190.lock"
    with SlotLease("http://localhost:18190", tmp_path) as again:  # freed for any spelling
        assert again.held


def test_a_crashed_holders_lease_is_free(tmp_path: Path, server_env: dict[str, str]) -> None:
    with holder(tmp_path, server_env) as other:
        os.killpg(other.pid, signal.SIGKILL)  # no release: the kernel drops the flock
        other.wait(timeout=10)
        with SlotLease(URL, tmp_path) as lease:
            assert lease.path.read_text() == f"{os.getpid()}\n"  # the dead pid is replaced
