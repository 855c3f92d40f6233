"""Executing a schedule: pairs concurrently, arms of a pair in planned order, attempts kept."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pairbench._errors import InfraStop
from pairbench.agents._env import scrubbed_env
from pairbench.agents._transcript import Transcript
from pairbench.fixtures._procs import FixtureError, WarmServer, start_warm_server
from pairbench.runner._attempt import AttemptRecord, run_attempt
from pairbench.runner._context import CANARY_ENV, RunContext
from pairbench.runner._progress import RunProgress
from pairbench.schedule._plan import Pair, Schedule, TrialKey
from pairbench.spec._models import McpServer, WebMcpPage
from pairbench.store._atomic import sha256_file
from pairbench.store._journal import Journal
from pairbench.store._records import Outcome, TrialResult


@dataclass
class RunState:
    """Mutable bookkeeping of one invocation (``run`` or ``resume``)."""

    done: set[TrialKey] = field(default_factory=set)
    attempts: dict[TrialKey, int] = field(default_factory=lambda: defaultdict(int))
    infra: dict[TrialKey, int] = field(default_factory=lambda: defaultdict(int))
    spent_usd: float = 0.0
    stop_reason: str | None = None
    budget_reason: str | None = None


def _now() -> str:
    return datetime.now(UTC).isoformat()


AttemptRunner = Callable[[RunContext, TrialKey, Pair, int], Awaitable[AttemptRecord]]
"""Runs one attempt: :func:`run_attempt` in this process, or as a Ray task (``_ray.py``)."""


class Executor:
    """Executes one run directory's schedule; attempts run in-process unless told otherwise."""

    def __init__(
        self,
        rc: RunContext,
        schedule: Schedule,
        state: RunState,
        progress: RunProgress,
        attempt_runner: AttemptRunner = run_attempt,
    ) -> None:
        self.rc = rc
        self.schedule = schedule
        self.state = state
        self.progress = progress
        self.attempt_runner = attempt_runner
        self.journal: Journal = rc.run_dir.journal()

    # -- records ---------------------------------------------------------------------------
    def _finish(self, key: TrialKey, rec: AttemptRecord) -> None:
        run_dir = self.rc.run_dir
        rec.transcript.close()
        working = run_dir.working_transcript(key, rec.result.attempt)
        # Hash the file on disk: for an interrupted attempt it is the only evidence.
        transcript_sha = sha256_file(working) if working.exists() else None
        result = rec.result.model_copy(update={"transcript_sha256": transcript_sha})
        if result.outcome in {"infra", "interrupted"}:
            kind = "infra" if result.outcome == "infra" else "interrupted"
            target = run_dir.kept_path(kind, key, result.attempt, ".jsonl")
            target.parent.mkdir(parents=True, exist_ok=True)
            if working.exists():
                os.replace(working, target)
            result_sha = run_dir.write_kept(kind, key, result)
            result_path = run_dir.kept_path(kind, key, result.attempt, ".json")
        else:
            target = run_dir.transcript_path(key)
            if working.exists():
                os.replace(working, target)
            result_sha = run_dir.write_result(key, result)
            result_path = run_dir.result_path(key)
            self.state.done.add(key)
        self.journal.append(
            "attempt_finished",
            key=key.label,
            attempt=result.attempt,
            outcome=result.outcome,
            result=str(result_path.relative_to(run_dir.path)),
            result_sha256=result_sha,
            transcript=str(target.relative_to(run_dir.path)) if transcript_sha else None,
            transcript_sha256=transcript_sha,
        )

    def _bare_result(
        self, key: TrialKey, pair: Pair, attempt: int, outcome: Outcome, reason: str
    ) -> TrialResult:
        """A record for an attempt that produced nothing to grade (not run, interrupted)."""
        exp = self.rc.loaded.experiment
        return TrialResult(
            run_id=self.rc.run_id,
            experiment=exp.id,
            arm=key.arm,
            task=key.task,
            trial=key.trial,
            labels=dict(exp.task(key.task).labels),
            seed=pair.seed,
            model_seed=pair.model_seed,
            attempt=attempt,
            start_order=pair.order.index(key.arm),
            outcome=outcome,
            reason=reason,
            agent=exp.arm_agent(key.arm).adapter,
            ended_at=_now(),
        )

    def _not_run(self, key: TrialKey, pair: Pair, reason: str) -> None:
        result = self._bare_result(key, pair, self.state.attempts[key], "not_run", reason)
        sha = self.rc.run_dir.write_result(key, result)
        self.state.done.add(key)
        self.journal.append(
            "attempt_finished",
            key=key.label,
            attempt=result.attempt,
            outcome="not_run",
            result=str(self.rc.run_dir.result_path(key).relative_to(self.rc.run_dir.path)),
            result_sha256=sha,
            transcript=None,
            transcript_sha256=None,
        )
        self.progress.advance_done("not_run")

    # -- budget ----------------------------------------------------------------------------
    def _over_budget(self) -> str | None:
        budget = self.rc.loaded.experiment.budget
        if self.state.budget_reason is not None:
            return self.state.budget_reason
        if budget.cost_ceiling_usd is None:
            return None
        estimate = budget.cost_per_trial_usd or 0.0
        if self.state.spent_usd + estimate > budget.cost_ceiling_usd:
            self.state.budget_reason = (
                f"budget stop: the next trial (estimated ${estimate:.4f}) would take the spend "
                f"${self.state.spent_usd:.4f} past the ceiling ${budget.cost_ceiling_usd:.2f}"
            )
        return self.state.budget_reason

    def _charge(self, result: TrialResult) -> None:
        cost = result.metrics.cost_usd if result.metrics else None
        if cost is not None and cost.value is not None:
            self.state.spent_usd += cost.value
        else:
            self.state.spent_usd += self.rc.loaded.experiment.budget.cost_per_trial_usd or 0.0

    # -- execution -------------------------------------------------------------------------
    async def _trial(self, key: TrialKey, pair: Pair) -> None:
        retries = self.rc.loaded.experiment.infra.retries
        while True:
            self.state.attempts[key] += 1
            attempt = self.state.attempts[key]
            self.journal.append("attempt_started", key=key.label, attempt=attempt)
            try:
                rec = await self.attempt_runner(self.rc, key, pair, attempt)
            except asyncio.CancelledError:
                self._interrupted(key, pair, attempt, "the run was stopped during the attempt")
                raise
            self._finish(key, rec)
            if rec.result.outcome != "infra":
                self._charge(rec.result)
                self.progress.advance_done(rec.result.outcome)
                return
            self.progress.note_infra()
            self.state.infra[key] += 1
            if self.state.infra[key] > retries:
                self.state.stop_reason = (
                    f"trial {key.label} failed for infrastructure reasons "
                    f"{self.state.infra[key]} times; last: {rec.result.reason}"
                )
                return

    def _interrupted(self, key: TrialKey, pair: Pair, attempt: int, reason: str) -> None:
        result = self._bare_result(key, pair, attempt, "interrupted", reason)
        self._finish(key, AttemptRecord(result=result, transcript=Transcript(None)))

    async def _pair(self, pair: Pair, sem: asyncio.Semaphore) -> None:
        async with sem:
            for key in pair.trial_keys():
                if key in self.state.done:
                    continue
                if self.state.stop_reason is not None:
                    return
                reason = self._over_budget()
                if reason is not None:
                    self._not_run(key, pair, reason)
                    continue
                await self._trial(key, pair)

    async def execute(self, concurrency: int) -> None:
        sem = asyncio.Semaphore(concurrency)
        async with self._warm_servers():
            await asyncio.gather(*(self._pair(p, sem) for p in self.schedule.pairs))

    @contextlib.asynccontextmanager
    async def _warm_servers(self) -> AsyncIterator[None]:
        exp = self.rc.loaded.experiment
        started: list[WarmServer] = []
        try:
            for arm_name, arm in exp.arms.items():
                if arm.tools == "none":
                    continue
                sites: dict[str, McpServer | WebMcpPage] = {
                    **{n: s for n, s in arm.tools.mcp.items() if s.transport == "http"},
                    **arm.tools.webmcp,  # a WebMCP page's site is warm too: once per run
                }
                for name, spec in sites.items():
                    env = scrubbed_env(self.rc.workdir(f"_warm/{arm_name}.{name}"))
                    server = await self._start_with_retry(name, spec, env)
                    started.append(server)
                    self.rc.warm_urls.setdefault(arm_name, {})[name] = server.url
            yield
        finally:
            for server in started:
                await server.aclose()

    async def _start_with_retry(
        self, name: str, spec: McpServer | WebMcpPage, env: dict[str, str]
    ) -> WarmServer:
        root = self.rc.run_dir.fixtures_root
        root.mkdir(parents=True, exist_ok=True)
        try:
            return await start_warm_server(name, spec, root, env)
        except FixtureError as first:
            self.journal.append("warm_server_failed", server=name, error=str(first))
            try:
                return await start_warm_server(name, spec, root, env)
            except FixtureError as second:
                what = "MCP server" if isinstance(spec, McpServer) else "WebMCP site"
                raise InfraStop(
                    f"the warm {what} {name!r} failed to start twice: {second}"
                ) from second


def planned_keys(schedule: Schedule) -> list[tuple[TrialKey, Pair]]:
    return [(key, pair) for pair in schedule.pairs for key in pair.trial_keys()]


async def run_with_signals(executor: Executor, concurrency: int) -> str:
    """Run until done; SIGINT/SIGTERM cancel in-flight attempts (kept as ``interrupted``)."""
    loop = asyncio.get_running_loop()
    main = asyncio.ensure_future(executor.execute(concurrency))
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, main.cancel)
    previous = os.environ.get(CANARY_ENV)
    os.environ[CANARY_ENV] = executor.rc.canaries[0]
    try:
        await main
        status = "complete"
    except asyncio.CancelledError:
        status = "interrupted"
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        if previous is None:
            os.environ.pop(CANARY_ENV, None)
        else:
            os.environ[CANARY_ENV] = previous
        executor.journal.close()
    if status == "complete" and executor.state.stop_reason is not None:
        status = f"stopped: {executor.state.stop_reason}"
    elif status == "complete" and executor.state.budget_reason is not None:
        status = f"stopped: {executor.state.budget_reason}"
    return status
