"""Every test here must leave no child process behind (stdio servers, warm servers)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

# tracker_helpers.py sits next to the tests (no __init__.py here); make it importable in
# every pytest import mode.
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))


def _children() -> dict[int, psutil.Process]:
    out = {}
    for proc in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                out[proc.pid] = proc
        except psutil.NoSuchProcess:
            continue
    return out


@pytest.fixture(autouse=True)
def no_leaked_children() -> Iterator[None]:
    before = set(_children())
    yield
    deadline = time.monotonic() + 5
    leaked = {pid: p for pid, p in _children().items() if pid not in before}
    while leaked and time.monotonic() < deadline:
        time.sleep(0.1)
        leaked = {pid: p for pid, p in _children().items() if pid not in before}
    for proc in leaked.values():
        proc.kill()
    assert not leaked, f"child processes left behind: {[p.cmdline() for p in leaked.values()]}"


@pytest.fixture
def server_env() -> dict[str, str]:
    """A scrubbed environment that still lets a child import pairbench from the checkout."""
    return {"PYTHONPATH": str(SRC), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
