"""Suite-wide guards: no test may leave a child process running."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

_PR_SET_CHILD_SUBREAPER = 36

sys.path.insert(0, str(Path(__file__).parent))  # tests/_helpers.py


def pytest_configure(config: pytest.Config) -> None:
    # Orphans of a runner a test SIGKILLs would be re-parented to init and escape the guard
    # below; as a subreaper, pytest adopts them instead, so they are seen and reaped.
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _alive_children() -> list[psutil.Process]:
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
            else:
                child.wait(0)  # reap
        except (psutil.NoSuchProcess, psutil.TimeoutExpired):
            continue
    return alive


@pytest.fixture(autouse=True)
def no_child_left_behind() -> Iterator[None]:
    """Fail any test that leaves a child process running (after a short grace)."""
    yield
    deadline = time.monotonic() + 5.0
    alive = _alive_children()
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = _alive_children()
    if alive:
        described = [f"{p.pid} {' '.join(p.cmdline()[:4])}" for p in alive]
        for proc in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        pytest.fail(f"test left {len(alive)} child process(es) running: {described}")


@pytest.fixture
def server_env() -> dict[str, str]:
    """A scrubbed environment that still lets a child import pairbench from the checkout."""
    src = Path(__file__).resolve().parents[1] / "src"
    return {"PYTHONPATH": str(src), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
