"""The Ray executor: attempts run as Ray tasks; the driver keeps schedule, store and journal.

The driver (the process that runs ``pairbench run``) plans, schedules, starts warm
servers, and writes every result, transcript and journal line itself. A Ray task runs one
attempt (fixture, agent, graders: :func:`run_attempt`) and returns the record and the
transcript's bytes; the driver writes those bytes where the local executor would have
streamed them, so the journal's hashes are of the same bytes.

A worker lost mid-attempt (killed, out of memory, its node gone) is an ``infra`` attempt
handled by the usual policy: kept under ``infra/``, retried once, then the run stops. Ray's
own retries are off (``max_retries=0``, ``retry_exceptions=False``); with them on, a lost
attempt would be re-run in silence and never reach ``infra/``.

``ray`` is an optional extra (``pip install 'pairbench[ray]'``), imported only here, only
when the Ray executor is asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pairbench._clock import now_iso
from pairbench._errors import RayExecutorError
from pairbench.runner._attempt import AttemptRecord, run_attempt
from pairbench.runner._context import RunContext
from pairbench.runner._ray_nodes import start_node_servers, stop_node_servers
from pairbench.runner._ray_worker import (
    _TRANSCRIPT,
    _attempt_in_worker,
    _Returned,
    _scratch,
    _Shared,
)
from pairbench.runner._run import AttemptRunner
from pairbench.runner._warm import warm_specs
from pairbench.schedule._plan import Pair, TrialKey
from pairbench.spec._load import LoadedExperiment
from pairbench.spec._models import Arm
from pairbench.store._records import TrialResult
from pairbench.store._transcript import Transcript

EXECUTORS = ("local", "ray")
"""The executors ``run`` and ``resume`` accept."""

SHARED_LOOPBACK_ENV = "PAIRBENCH_RAY_SHARED_LOOPBACK"
"""Set to ``1`` to give every node the driver's warm servers instead of its own (when every
node reaches the driver's 127.0.0.1, e.g. a one-machine cluster)."""

CANCEL_GRACE_S = 10.0
"""After Ctrl-C, how long a task gets to stop its agent and servers before it is killed."""

INSTALL_HINT = "pip install 'pairbench[ray]'"

_LOCAL_ADDRESSES = {None, "", "local"}


def is_remote(address: str | None) -> bool:
    """True for an address that may place tasks on other machines (``auto`` included)."""
    return address not in _LOCAL_ADDRESSES


def check_executor(loaded: LoadedExperiment, executor: str, address: str | None) -> None:
    """Refuse, before anything starts, an executor that cannot run this experiment safely."""
    if executor not in EXECUTORS:
        raise RayExecutorError(
            f"unknown executor {executor!r}: choose one of {', '.join(EXECUTORS)}"
        )
    if executor == "local":
        if address:
            raise RayExecutorError(
                "--address is for --executor ray: add --executor ray, or drop --address"
            )
        return
    revision_arms = [a for a in loaded.experiment.arms if loaded.experiment.revision_of(a)]
    if revision_arms:
        raise RayExecutorError(
            f"arm {revision_arms[0]!r} runs a git revision, which is checked out and frozen on "
            "this machine: run it with --executor local"
        )
    # Warm servers need no check: each node starts its own (``_ray_nodes``), or, with
    # PAIRBENCH_RAY_SHARED_LOOPBACK=1, the user says every node reaches the driver's loopback.
    import_ray()


def import_ray() -> Any:
    """The ``ray`` module, or an error that names the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise RayExecutorError(
            f"--executor ray needs Ray, which is not installed: {INSTALL_HINT} ({exc})"
        ) from exc
    return ray


def ray_options(arm: Arm) -> dict[str, Any]:
    """``ray.remote`` options for one attempt of ``arm``: its resources, Ray's retries off.

    ``resources: {num_cpus: 1, memory_mb: 512}`` becomes ``num_cpus=1, memory=536870912``.
    """
    opts: dict[str, Any] = {"max_retries": 0, "retry_exceptions": False}
    res = arm.resources
    if res is not None:
        if res.num_cpus is not None:
            opts["num_cpus"] = res.num_cpus
        if res.num_gpus is not None:
            opts["num_gpus"] = res.num_gpus
        if res.memory_mb is not None:
            opts["memory"] = res.memory_mb * 1024 * 1024
        if res.custom:
            opts["resources"] = dict(res.custom)
    return opts


# -- the worker side ------------------------------------------------------------------------
def _write_working(path: Path, data: bytes) -> None:
    # No fsync here: the executor's group commit fsyncs the working transcript before it
    # renames it into place and journals its hash (``_commit.py``).
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _salvage(rc: RunContext, key: TrialKey, attempt: int) -> None:
    """Take what a lost or cancelled task streamed (if this driver sees it) as the attempt's
    working transcript, which ``Executor`` hashes and keeps with the record."""
    left = _scratch(rc.run_dir.path, key, attempt) / _TRANSCRIPT
    working = rc.run_dir.working_transcript(key, attempt)
    if left.is_file() and not working.exists():
        working.parent.mkdir(parents=True, exist_ok=True)
        os.replace(left, working)


def _lost_reason(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()
    detail = first[0] if first else ""
    return f"the Ray worker running the attempt was lost ({type(exc).__name__}: {detail})"


@dataclass
class RayRunner:
    """Runs attempts as Ray tasks; called by ``Executor`` in place of :func:`run_attempt`."""

    ray: Any
    loaded: LoadedExperiment
    _remote: Any = None
    _shared: Any = None
    _options: dict[str, dict[str, Any]] = field(default_factory=dict)
    _actors: list[Any] = field(default_factory=list)
    """The ``_ray_nodes`` actors holding each node's warm servers."""

    def __post_init__(self) -> None:
        self._remote = self.ray.remote(max_retries=0, retry_exceptions=False)(_attempt_in_worker)
        self._options = {
            name: ray_options(arm) for name, arm in self.loaded.experiment.arms.items()
        }

    async def _shared_ref(self, rc: RunContext) -> Any:
        # Put once, after the warm servers are up (their URLs are in rc.warm_urls by then).
        if self._shared is None:
            node_urls = None
            alive = sum(1 for n in self.ray.nodes() if n.get("Alive"))
            # One node is this machine: the driver's warm servers are already in reach.
            if alive > 1 and warm_specs(self.loaded) and os.environ.get(SHARED_LOOPBACK_ENV) != "1":
                self._actors, node_urls = await start_node_servers(
                    self.ray, self.loaded, rc.run_dir.path.resolve()
                )
            for task in self.loaded.experiment.tasks:
                # Prompts and plans travel with the task: a node needs no copy of them. One
                # that cannot be read is left to the attempt, which records it as infra.
                with contextlib.suppress(Exception):
                    rc.text(task.prompt)
                    if task.plan:
                        rc.plan(task.plan)
            shared = _Shared(
                loaded=self.loaded,
                run_dir=rc.run_dir.path.resolve(),
                run_id=rc.run_id,
                canaries=list(rc.canaries),
                warm_urls=rc.warm_urls,
                texts=dict(rc._texts),
                plans=dict(rc._plans),
                node_urls=node_urls,
                driver_node=str(self.ray.get_runtime_context().get_node_id()),
            )
            self._shared = self.ray.put(shared)
        return self._shared

    async def __call__(
        self, rc: RunContext, key: TrialKey, pair: Pair, attempt: int
    ) -> AttemptRecord:
        started = now_iso()
        ref = self._remote.options(**self._options.get(key.arm, {})).remote(
            await self._shared_ref(rc), key, pair, attempt, rc.signals.model_call_succeeded
        )
        try:
            returned: _Returned = await ref
        except asyncio.CancelledError:
            await self._cancel(ref)
            _salvage(rc, key, attempt)  # kept under interrupted/, as a local attempt's is
            raise
        except self.ray.exceptions.RayError as exc:
            _salvage(rc, key, attempt)  # kept under infra/ with the record
            # WorkerCrashedError, NodeDiedError, OutOfMemoryError, ObjectLostError, a task
            # that raised (RayTaskError, e.g. a SystemExit or a node without pairbench):
            # nothing was graded, and the harness, not the agent, failed.
            return AttemptRecord(
                result=self._lost(rc, key, pair, attempt, started, _lost_reason(exc)),
                transcript=Transcript(None),
            )
        if returned.model_call_succeeded:
            rc.signals.model_call_succeeded = True
        transcript = Transcript(None)
        if returned.transcript is not None:
            # Where the local executor streams it: Executor._finish hashes and files it.
            _write_working(rc.run_dir.working_transcript(key, attempt), returned.transcript)
            transcript.events = [json.loads(line) for line in returned.transcript.splitlines()]
        return AttemptRecord(result=returned.result, transcript=transcript)

    async def _cancel(self, ref: Any) -> None:
        """Ask the task to stop (its agent and servers are stopped), then kill it."""
        ray = self.ray
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=False)
        # Done, failed, timed out, or Ctrl-C again: in every case, make sure it is gone.
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.wrap_future(ref.future()), CANCEL_GRACE_S)
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=True)

    def close(self) -> None:
        """Stop the nodes' warm servers (before Ray shuts down)."""
        stop_node_servers(self.ray, self._actors)
        self._actors = []

    def _lost(
        self, rc: RunContext, key: TrialKey, pair: Pair, attempt: int, started: str, reason: str
    ) -> TrialResult:
        return rc.new_result(key, pair, attempt, "infra", reason, started_at=started)


@contextlib.contextmanager
def attempt_runner(
    loaded: LoadedExperiment, executor: str, address: str | None
) -> Iterator[AttemptRunner]:
    """The attempt runner for ``executor``, with Ray connected for as long as it is open.

    A Ray already initialised by the caller (``ray.init(...)`` before ``start_run``, e.g.
    with a ``runtime_env``) is used as it is and left running; otherwise this connects to
    ``address`` (``None``: a new local Ray) and shuts Ray down afterwards.
    """
    check_executor(loaded, executor, address)
    if executor == "local":
        yield run_attempt
        return
    ray = import_ray()
    owned = not ray.is_initialized()
    if owned:
        kwargs: dict[str, Any] = {"logging_level": logging.WARNING}
        if not is_remote(address):
            kwargs["include_dashboard"] = False
        # "local": always a new Ray on this machine, never a cluster RAY_ADDRESS points to.
        ray.init(address="local" if address in _LOCAL_ADDRESSES else address, **kwargs)
    runner = RayRunner(ray, loaded)
    try:
        yield runner
    finally:
        runner.close()
        if owned:
            ray.shutdown()
