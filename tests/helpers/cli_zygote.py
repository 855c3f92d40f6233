"""Run many ``pairbench`` CLI invocations cheaply: one interpreter imports pairbench once, then
forks a child per invocation (its own process, working folder, stdout and stderr, killed at
its timeout), so a corpus of a hundred invocations pays the import once, not a hundred times.

The child runs what ``python -m pairbench ARGS`` runs (``pairbench.cli.main`` with that argv)
and exits with its code; an exception that escapes is printed as Python would print it, exit 1.

**Usage**::

    with Zygote() as z:
        code, stderr = z.run(("check", "experiment.yaml"), cwd=folder, timeout_s=30)
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType

DRIVER = r"""
import json, os, signal, sys, tempfile, time, traceback
import pairbench.cli
pairbench.cli.app  # every command module, imported once here rather than in every child

def child(args, cwd, out_fd, err_fd):
    os.chdir(cwd)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = os.fdopen(2, "w", encoding="utf-8", closefd=False)
    sys.argv = ["pairbench", *args]
    code = 0
    try:
        pairbench.cli.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

for line in sys.stdin:
    job = json.loads(line)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:
            os.setsid()
            child(job["args"], job["cwd"], out.fileno(), err.fileno())
        deadline = time.monotonic() + job["timeout_s"]
        code = None
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    print(json.dumps({"code": code, "stderr": stderr}), flush=True)
"""


class Zygote:
    """A driver process that forks one child per ``run``; ``run`` is safe from one thread at a
    time (use one Zygote per thread for parallel invocations)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> Zygote:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            proc.stdin.close()
            proc.wait(timeout=30)

    def run(self, args: tuple[str, ...], cwd: Path, timeout_s: float) -> tuple[int | None, str]:
        """Exit code (``None``: killed at ``timeout_s``) and stderr of ``pairbench ARGS``."""
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        job = {"args": list(args), "cwd": str(cwd), "timeout_s": timeout_s}
        with self._lock:
            proc.stdin.write(json.dumps(job) + "\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
        code = answer["code"]
        return (code if isinstance(code, int) else None), str(answer["stderr"])
