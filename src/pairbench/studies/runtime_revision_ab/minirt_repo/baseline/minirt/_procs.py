"""Owned child processes: started, observed and stopped with receipts, none left behind."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ._files import ToolFailed

PROGRAMS = ("python", "python3")


@dataclass
class Owned:
    """One child the runtime started, with everything it printed so far."""

    handle: str
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)


class Processes:
    """The children of one run; ``stop_all`` ends whatever the model left running."""

    def __init__(self, workspace: Path, env: dict[str, str]) -> None:
        self._workspace = workspace
        self._env = env
        self._owned: dict[str, Owned] = {}

    def start(self, script: Path, args: list[str], ready: str, wait_s: float) -> dict[str, object]:
        """Start ``python SCRIPT ARGS`` in the workspace; wait for a line containing ``ready``."""
        handle = f"p{len(self._owned) + 1}"
        # Same process group as the runtime: a harness that kills the group kills these too.
        process = subprocess.Popen(
            [sys.executable, str(script), *args],
            cwd=self._workspace,
            env=self._env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        owned = Owned(handle=handle, process=process)
        self._owned[handle] = owned
        threading.Thread(target=self._pump, args=(owned,), daemon=True).start()
        deadline = time.monotonic() + wait_s
        is_ready = False
        while time.monotonic() < deadline and process.poll() is None:
            if any(ready in line for line in list(owned.output)):
                is_ready = True
                break
            time.sleep(0.05)
        return {"handle": handle, "pid": process.pid, "ready": is_ready, **self._state(owned)}

    def query(self, handle: str) -> dict[str, object]:
        """Whether the child still runs, its exit code and its last output lines."""
        return {"handle": handle, **self._state(self._get(handle))}

    def stop(self, handle: str) -> dict[str, object]:
        """Terminate the child (kill after 3 s); the receipt says how it ended."""
        owned = self._get(handle)
        return {"handle": handle, "stopped": _end(owned.process), **self._state(owned)}

    def stop_all(self) -> list[dict[str, object]]:
        """End every child still running (the run is over); one receipt each."""
        receipts: list[dict[str, object]] = []
        for owned in self._owned.values():
            if owned.process.poll() is None:
                receipts.append({"handle": owned.handle, "stopped": _end(owned.process)})
        return receipts

    def _get(self, handle: str) -> Owned:
        if handle not in self._owned:
            raise ToolFailed("missing_resource", f"no process with handle {handle!r}")
        return self._owned[handle]

    @staticmethod
    def _pump(owned: Owned) -> None:
        assert owned.process.stdout is not None
        for line in owned.process.stdout:
            owned.output.append(line.rstrip("\n"))

    @staticmethod
    def _state(owned: Owned) -> dict[str, object]:
        code = owned.process.poll()
        return {"running": code is None, "exit_code": code, "output": owned.output[-20:]}


def _end(process: subprocess.Popen[str]) -> str:
    if process.poll() is not None:
        return "already_exited"
    process.terminate()
    try:
        process.wait(timeout=3)
        return "terminated"
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return "killed"
