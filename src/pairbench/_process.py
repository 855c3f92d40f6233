"""Children in their own process group, killed as a group, and none outlives the runner.

Every child is started through ``popen`` or ``spawn``, which:

- run it in its own session (``start_new_session=True``), so that Ctrl-C does not reach it
  before the runner can record the attempt, and so that killing its process group also
  takes its grandchildren (``terminate_group``, ``stop_process``);
- ask the kernel to SIGKILL it if the thread that started it dies (``die_with_parent``:
  the runner was SIGKILLed, or OOM-killed, and cleaned nothing up);
- inside ``supervised()`` (one per run or resume), put the run's token in its environment
  and register its group with the run's watchdog (``pairbench._supervisor``), which kills
  the group and every process carrying the token once the runner is gone. Die-with-parent
  reaches only the child itself; the token also reaches grandchildren that left the group.

Children that a library starts (the MCP SDK's stdio servers, Playwright's browser) get the
token through ``child_env``, and the watchdog's scan finds them by it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

from pairbench import _supervisor
from pairbench._supervisor import ENV_RUN_TOKEN

__all__ = [
    "ENV_RUN_TOKEN",
    "Supervisor",
    "child_env",
    "die_with_parent",
    "group_alive",
    "kill_group",
    "popen",
    "resolve_argv",
    "spawn",
    "stop_process",
    "supervised",
    "terminate_group",
]

_PYTHONS = frozenset({"python", "python3"})
_WATCHDOG = os.path.abspath(_supervisor.__file__)
_PR_SET_PDEATHSIG = 1


def resolve_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with a leading ``python``/``python3`` replaced by this interpreter.

    Debian has no ``python``, and a scrubbed ``PATH`` could find another interpreter.

    **Usage**::

        resolve_argv(["python3", "-m", "pkg"])   # -> [sys.executable, "-m", "pkg"]
    """
    out = list(argv)
    if out and out[0] in _PYTHONS:
        out[0] = sys.executable
    return out


def die_with_parent() -> None:
    """``preexec_fn``: ask Linux to SIGKILL this child when the thread that started it dies.

    The signal follows the forking *thread*: start children from a thread that lives as
    long as they should (the event loop's), not from a short-lived worker thread.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _dies_with(parent: int, then: Callable[[], None] | None = None) -> Callable[[], None]:
    def preexec() -> None:
        die_with_parent()
        # A parent that died between fork and prctl sent no signal: go now.
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        if then is not None:  # the attempt's limits (pairbench._confine)
            then()

    return preexec


class Supervisor:
    """The runner's end of the run's watchdog (``pairbench._supervisor``): token and pipe.

    **Usage**::

        supervisor = Supervisor.start()
        env = {**env, ENV_RUN_TOKEN: supervisor.token}   # in every child's environment
        supervisor.watch(proc.pid)     # the child's own group: one small write on the pipe
        supervisor.forget(proc.pid)    # the group was killed and its leader reaped
        supervisor.close()             # EOF: the watchdog kills what is left; waits for it
    """

    def __init__(self, proc: subprocess.Popen[bytes], token: str) -> None:
        assert proc.stdin is not None
        self.proc = proc
        self.token = token
        self._pipe: IO[bytes] | None = proc.stdin
        # close() must not close the fd under a write in flight on another thread (a
        # WarmServer stops in a worker thread): the number could be reused by another file.
        self._lock = threading.Lock()

    @classmethod
    def start(cls) -> Supervisor:
        """Start the watchdog for this process: its own session, as it must outlive us."""
        token = secrets.token_hex(16)
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", _WATCHDOG, token, str(os.getpid())],
            stdin=subprocess.PIPE,
            bufsize=0,
            # Not our stdout/stderr: a caller reading our pipes to EOF must not wait on it.
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )
        return cls(proc, token)

    def watch(self, pgid: int) -> None:
        """Kill process group ``pgid`` if the runner dies before it says ``forget``."""
        self._send(b"+%d\n" % pgid)

    def forget(self, pgid: int) -> None:
        """Group ``pgid`` is gone: its number may be reused by someone else's group."""
        self._send(b"-%d\n" % pgid)

    def _send(self, line: bytes) -> None:
        with self._lock:
            if self._pipe is None:
                return
            # A watchdog that died must not fail trials: it is a safety net.
            with contextlib.suppress(OSError, ValueError):
                self._pipe.write(line)  # unbuffered: one write(2), atomic below PIPE_BUF

    def close(self, timeout_s: float = 10.0) -> None:
        """EOF to the watchdog, which kills what is left of the run; wait until it has."""
        with self._lock:
            pipe, self._pipe = self._pipe, None
        if pipe is None:
            return
        with contextlib.suppress(OSError):
            pipe.close()
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_current: ContextVar[Supervisor | None] = ContextVar("pairbench_supervisor", default=None)
_owners: dict[int, Supervisor] = {}
"""Who watches each live group: it is forgotten there, whichever context stops it."""


@contextlib.contextmanager
def supervised() -> Iterator[Supervisor | None]:
    """A watchdog for everything started inside: nothing outlives this block or its process.

    Spawning inside (also in asyncio tasks and ``to_thread`` workers started inside) puts
    the run's token in the child's environment and registers its group; on exit, or when
    this process dies, the watchdog kills what is left. Outside Linux it does nothing.

    **Usage**::

        with supervised():
            asyncio.run(main())    # children of main() cannot outlive this block
    """
    if not sys.platform.startswith("linux"):
        yield None
        return
    supervisor = Supervisor.start()
    reset = _current.set(supervisor)
    try:
        yield supervisor
    finally:
        _current.reset(reset)
        supervisor.close()


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default ``os.environ``) plus the current run's token, if one is supervised.

    For children a library starts; ``popen`` and ``spawn`` apply it themselves.

    **Usage**::

        StdioServerParameters(command=argv[0], args=argv[1:], env=child_env(server_env))
    """
    out = dict(os.environ if env is None else env)
    supervisor = _current.get()
    if supervisor is not None:
        out[ENV_RUN_TOKEN] = supervisor.token
    return out


def _watch(pid: int) -> None:
    supervisor = _current.get()
    if supervisor is not None:
        _owners[pid] = supervisor
        supervisor.watch(pid)  # the child leads its own session, so pgid == pid


def _forget(pid: int) -> None:
    supervisor = _owners.pop(pid, None)
    if supervisor is not None:
        supervisor.forget(pid)


def _child_kwargs(
    env: Mapping[str, str] | None, preexec: Callable[[], None] | None = None
) -> dict[str, Any]:
    """What every child gets, sync or asyncio: the run token, its own session, and death
    with this process (then ``preexec``, in the child before ``exec``)."""
    return {
        "env": child_env(env),
        "start_new_session": True,
        "preexec_fn": _dies_with(os.getpid(), preexec),
    }


def popen(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    stdin: Any = None,
    stdout: Any = None,
    stderr: Any = None,
    cwd: Path | str | None = None,
) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` in its own session, dying with us, known to the run's watchdog.

    Stop it with ``terminate_group``.

    **Usage**::

        proc = popen(argv, env=env, stdin=subprocess.DEVNULL, stderr=log)
        try:
            ...
        finally:
            terminate_group(proc)
    """
    proc = subprocess.Popen(
        list(argv), stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, **_child_kwargs(env)
    )
    _watch(proc.pid)
    return proc


async def spawn(
    *argv: str,
    env: Mapping[str, str] | None,
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    cwd: Path | str | None = None,
    limit: int = 2**16,
    preexec: Callable[[], None] | None = None,
) -> asyncio.subprocess.Process:
    """The asyncio twin of ``popen``; stop it with ``stop_process``. ``preexec`` runs in
    the child before ``exec`` (an attempt's limits: ``Confinement.preexec``).

    **Usage**::

        proc = await spawn(*argv, env=env, stdout=asyncio.subprocess.PIPE)
        try:
            ...
        finally:
            await stop_process(proc)
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        limit=limit,
        **_child_kwargs(env, preexec),
    )
    _watch(proc.pid)
    return proc


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by ``pid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still exists."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def terminate_group(proc: subprocess.Popen[bytes], grace_s: float = 3.0) -> None:
    """SIGTERM the child's whole group, then SIGKILL it after ``grace_s``; reap the child."""
    if proc.poll() is None:
        kill_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    # Grandchildren may outlive a leader that exited on SIGTERM: kill what is left.
    kill_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):  # only an unkillable (D state) child
        proc.wait(timeout=grace_s)
    _forget(proc.pid)


async def stop_process(proc: asyncio.subprocess.Process, grace_s: float = 2.0) -> None:
    """The asyncio twin of ``terminate_group``."""
    if proc.returncode is None:
        kill_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(proc.wait(), grace_s)
    kill_group(proc.pid, signal.SIGKILL)
    try:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                await proc.wait()
    finally:  # a cancelled wait still leaves the group killed
        _forget(proc.pid)
