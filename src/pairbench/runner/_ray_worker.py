"""The worker side of the Ray executor: one attempt inside a Ray task.

The worker streams its transcript to a scratch file and returns the record with the exact
transcript bytes; the driver writes them, so the journal's hashes match what was stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pairbench.runner._attempt import run_attempt
from pairbench.runner._context import CANARY_ENV, RunContext
from pairbench.schedule._plan import Pair, TrialKey
from pairbench.spec._load import LoadedExperiment
from pairbench.store._records import TrialResult
from pairbench.store._run_dir import RunDir

_TRANSCRIPT = "transcript.jsonl"


@dataclass(frozen=True)
class _Shared:
    """What every attempt of the run needs; put in Ray's object store once."""

    loaded: LoadedExperiment
    run_dir: Path
    run_id: str
    canaries: list[str]
    warm_urls: dict[str, dict[str, str]]
    texts: dict[str, str]
    plans: dict[str, dict[str, Any]]
    node_urls: dict[str, dict[str, dict[str, str]]] | None = None
    """node id -> arm -> server -> URL of that node's warm servers (see ``_ray_nodes``);
    None: every node uses the driver's (``warm_urls``)."""
    driver_node: str | None = None


@dataclass(frozen=True)
class _Returned:
    result: TrialResult
    transcript: bytes | None
    """The transcript file's bytes, exactly as the attempt wrote them (None: no file)."""
    model_call_succeeded: bool


def _scratch(run_dir: Path, key: TrialKey, attempt: int) -> Path:
    """Where a worker that sees the run directory streams the attempt's transcript.

    The driver writes the transcript itself from the bytes the task returns; this file is
    what is left of a lost or cancelled attempt, which the driver then keeps.
    """
    return run_dir / "work" / "_ray" / key.arm / key.task / f"{key.trial}.{attempt}"


class _WorkerRunDir(RunDir):
    """The run directory as a worker sees it: the transcript streams to a scratch file.

    Fixtures and work folders go to the run directory when the worker sees it (a local Ray,
    a shared filesystem), else under the worker's temporary folder.
    """

    def __init__(self, path: Path, scratch: Path) -> None:
        super().__init__(path)
        self._scratch = scratch

    def working_transcript(self, key: TrialKey, attempt: int) -> Path:
        return self._scratch / _TRANSCRIPT


_T = TypeVar("_T")


async def _cancellable(work: Awaitable[_T]) -> _T:
    """Await ``work``; a ``ray.cancel`` (without force) cancels it at once.

    Ray delivers that cancel as ``_thread.interrupt_main()``: a SIGINT handler call that
    waits for the main thread to run Python again, which an event loop blocked in
    ``epoll`` never does. As an asyncio signal handler it arrives through the loop's
    wake-up pipe, and the attempt is cancelled like a local one on Ctrl-C (the agent's
    and servers' process groups are stopped).
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        added = True
    except (RuntimeError, ValueError):  # not the main thread: Ray's force cancel still works
        added = False
    try:
        return await work
    finally:
        if added:
            loop.remove_signal_handler(signal.SIGINT)


def _where(shared: _Shared) -> tuple[str, str | None, dict[str, dict[str, str]]]:
    """(this node, the node whose warm servers the attempt uses, their URLs)."""
    import ray

    node = str(ray.get_runtime_context().get_node_id())
    if shared.node_urls is not None and node in shared.node_urls:
        return node, node, shared.node_urls[node]
    return node, shared.driver_node, shared.warm_urls


def _attempt_in_worker(
    shared: _Shared, key: TrialKey, pair: Pair, attempt: int, model_call_succeeded: bool
) -> _Returned:
    """One attempt inside a Ray worker (a Ray task's body)."""
    previous = os.environ.get(CANARY_ENV)
    os.environ[CANARY_ENV] = shared.canaries[0]  # as the local executor's process has it
    # Ray starts its processes with SIGINT blocked; the agents this attempt starts get the
    # signal mask the local executor's children get.
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    node, warm_node, warm = _where(shared)
    try:
        with contextlib.ExitStack() as stack:
            if shared.run_dir.is_dir():  # a local Ray, or a shared filesystem
                root = shared.run_dir
                scratch = _scratch(root, key, attempt)
                scratch.mkdir(parents=True, exist_ok=True)
            else:
                scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
                root = scratch / "run"
            rc = RunContext(
                loaded=shared.loaded,
                run_dir=_WorkerRunDir(root, scratch),
                run_id=shared.run_id,
                canaries=list(shared.canaries),
                warm_urls={a: dict(u) for a, u in warm.items()},
                _texts=dict(shared.texts),
                _plans={k: dict(v) for k, v in shared.plans.items()},
            )
            rc.signals.model_call_succeeded = model_call_succeeded
            rc.placement = (node, warm_node)
            rec = asyncio.run(_cancellable(run_attempt(rc, key, pair, attempt)))
            rec.transcript.close(sync=False)  # read back and deleted below: no fsync needed
            path = rc.run_dir.working_transcript(key, attempt)
            data = path.read_bytes() if path.exists() else None
            path.unlink(missing_ok=True)  # the driver writes the transcript from these bytes
            return _Returned(rec.result, data, rc.signals.model_call_succeeded)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if previous is None:
            os.environ.pop(CANARY_ENV, None)
        else:
            os.environ[CANARY_ENV] = previous


# -- the driver side ------------------------------------------------------------------------
