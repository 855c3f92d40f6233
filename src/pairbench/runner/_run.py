"""Executing a schedule: pairs concurrently, arms of a pair in planned order, attempts kept.

A schedule with campaigns (``order: {block: campaign}``) runs instead one attempt at a
time, in its recorded execution order: campaign after campaign, an infra retry in place
before the next attempt (``Executor.campaigns``).

The concurrency limit counts agent attempts in flight (:class:`AttemptSlots`), not pairs: a
pair takes a slot per arm, so the slot it frees between its arms, and the slots idle in the
tail, go to other pairs. Records reach the disk through a group commit (``_commit.py``):
attempts that finish together share their fsyncs. An attempt starts only once the cost
ceiling has room for its worst-case cost beside those in flight (``_ceiling.py``).
"""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from pairbench._atomic import sha256_file
from pairbench.runner._attempt import AttemptRecord, run_attempt
from pairbench.runner._ceiling import CostCeiling, Reservation, Spend
from pairbench.runner._context import RunContext
from pairbench.runner._folders import AheadFolders, folder_pool
from pairbench.runner._model_proxy import attempt_label, attempt_window, window_start
from pairbench.runner._progress import RunProgress
from pairbench.runner._slots import AttemptSlots
from pairbench.runner._warm import warm_servers
from pairbench.schedule._plan import Pair, Schedule, TrialKey
from pairbench.store._commit import CommitEntry, GroupCommitter, MoveFile, PutFile
from pairbench.store._events import AttemptFinished, AttemptStarted
from pairbench.store._journal import Journal
from pairbench.store._recorded import attempt_files
from pairbench.store._records import Outcome, TrialResult
from pairbench.store._row import trial_row
from pairbench.store._run_info import PriorSpend
from pairbench.store._transcript import Transcript


@dataclass
class RunState:
    """Mutable bookkeeping of one invocation (``run`` or ``resume``)."""

    done: set[TrialKey] = field(default_factory=set)
    attempts: dict[TrialKey, int] = field(default_factory=lambda: defaultdict(int))
    infra: dict[TrialKey, int] = field(default_factory=lambda: defaultdict(int))
    campaign_replacements: dict[tuple[int, str], int] = field(
        default_factory=lambda: defaultdict(int)
    )
    """Per campaign (pair, arm): its replacements so far (infra retries, whole re-runs)."""
    spend: Spend = field(default_factory=Spend)
    """Every recorded attempt's cost, this invocation's and (on resume) the stored ones."""
    stop_reason: str | None = None
    budget_reason: str | None = None
    prior: PriorSpend | None = None
    """Spend before the run its study counted (run.json's ``prior_spend``)."""


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
        self.commits = GroupCommitter(self.journal, rc.run_dir.path)
        b = rc.loaded.experiment.budget
        prior = b.prior_spend_usd + (state.prior.usd if state.prior else 0.0)
        self.ceiling = CostCeiling(b.cost_ceiling_usd, b.cost_per_trial_usd, state.spend, prior)
        self.ceiling.overshoot = state.prior.overshoot_usd if state.prior else None
        self.ahead = AheadFolders(rc)

    # -- records ---------------------------------------------------------------------------
    def _event(
        self, files: tuple[PutFile | MoveFile, ...], event: AttemptStarted | AttemptFinished
    ) -> asyncio.Future[None]:
        """Queue one journal line (and the files it names) for the next group commit."""
        return self.commits.submit(CommitEntry(event, files))

    def _rel(self, path: Path) -> str:
        # Text, not Path.relative_to (~10 us, twice per attempt): paths here are built
        # from the run folder's own text (RunDir), so they start with it.
        root, text = f"{self.rc.run_dir.path}/", str(path)
        return text.removeprefix(root) if text.startswith(root) else str(path.relative_to(root))

    def _finish(self, key: TrialKey, rec: AttemptRecord) -> asyncio.Future[None]:
        """Queue the attempt's record, transcript and ``attempt_finished`` line; the future
        resolves once all three are durable."""
        return self.commits.submit(self._finished(key, rec))

    def _finished(self, key: TrialKey, rec: AttemptRecord) -> CommitEntry:
        """The attempt's record and transcript, staged, with their ``attempt_finished``
        line."""
        run_dir = self.rc.run_dir
        working = run_dir.working_transcript(key, rec.result.attempt)
        written = rec.transcript.hand_over()
        handle = None
        transcript_sha: str | None
        if written is not None and written.path == working:
            handle = written.handle
            # The transcript streamed every byte of the file: its running digest is the
            # file's hash, unless something else wrote there too (then read the file).
            intact = os.fstat(handle.fileno()).st_size == written.size
            transcript_sha = written.sha256 if intact else sha256_file(working)
        else:
            if written is not None:
                written.handle.close()
            # Written by another hand (the Ray driver) or left by an interrupted attempt:
            # the file on disk is the evidence.
            transcript_sha = sha256_file(working) if working.exists() else None
        result = rec.result.model_copy(update={"transcript_sha256": transcript_sha})
        kept = result.outcome if result.outcome in {"infra", "interrupted"} else None
        if kept is not None:
            target = run_dir.kept_path(kept, key, result.attempt, ".jsonl")
        else:
            target = run_dir.transcript_path(key)
        # Redacted here, as it is stored: the verdicts in it were judged before, on what
        # the agent really produced; the row is built from the record as stored.
        stored, result = run_dir.stage_record(key, result, kept, self.rc.redactor())
        moved = () if transcript_sha is None else (MoveFile(working, target, handle),)
        return CommitEntry(
            AttemptFinished(
                key=key.label,
                attempt=result.attempt,
                outcome=result.outcome,
                result=self._rel(stored.path),
                result_sha256=stored.sha256,
                transcript=self._rel(target) if transcript_sha else None,
                transcript_sha256=transcript_sha,
                row=trial_row(result, kept=result.outcome in {"infra", "interrupted"}),
                files=attempt_files(run_dir, key, result.attempt),
            ),
            (*moved, stored),
        )

    def _bare_result(
        self, key: TrialKey, pair: Pair, attempt: int, outcome: Outcome, reason: str
    ) -> TrialResult:
        """A record for an attempt that produced nothing to grade (not run, interrupted)."""
        return self.rc.new_result(key, pair, attempt, outcome, reason)

    def _not_run(self, key: TrialKey, pair: Pair, reason: str) -> asyncio.Future[None]:
        result = self._bare_result(key, pair, self.state.attempts[key], "not_run", reason)
        stored = self.rc.run_dir.stage_result(key, result)
        return self._event(
            (stored,),
            AttemptFinished(
                key=key.label,
                attempt=result.attempt,
                outcome="not_run",
                result=self._rel(stored.path),
                result_sha256=stored.sha256,
                row=trial_row(result, kept=False),
            ),
        )

    # -- execution -------------------------------------------------------------------------
    async def _attempt(self, key: TrialKey, pair: Pair, held: Reservation) -> AttemptRecord:
        """Run one attempt (in a held slot, with its cost reserved); return its record, for
        the caller to hand to :meth:`_finish`.

        What the next attempt anywhere must see (spend, the infra count, a stop) is settled
        here, before the slot is freed; staging and committing the record need not be.
        """
        self.state.attempts[key] += 1
        attempt = self.state.attempts[key]
        try:
            # Durable before the agent starts: a crash can never hide an attempt that ran.
            await self._event((), AttemptStarted(key=key.label, attempt=attempt))
            spec, proxy = self.rc.loaded.experiment.proxy, self.rc.proxy
            # A thread hop only when there is a server to ask: without one it is pure cost.
            has_proxy = spec is not None and proxy is not None
            before = await asyncio.to_thread(window_start, spec) if has_proxy else None
            rec = await self.attempt_runner(self.rc, key, pair, attempt)
            if spec is not None and proxy is not None and before is not None:
                label = attempt_label(key, attempt)  # interference, and a startup 503 is infra
                args = (spec, proxy, self.rc.run_dir, label, before, rec)
                rec = await asyncio.to_thread(attempt_window, *args)
        except BaseException as exc:
            self.ceiling.release(held)
            if isinstance(exc, asyncio.CancelledError):
                self._interrupted(key, pair, attempt, "the run was stopped during the attempt")
            raise
        result = rec.result
        # Every attempt's recorded cost counts, an infra one's too: the spend is what the
        # stored records (results/, infra/) add up to.
        self.ceiling.settle(held, result)
        if result.outcome == "infra":
            exp = self.rc.loaded.experiment
            self.state.infra[key] += 1
            slot = (key.trial, key.arm)
            if self.schedule.campaigns:
                self.state.campaign_replacements[slot] += 1
            if self.state.infra[key] > exp.infra.retries:
                self.state.stop_reason = (
                    f"trial {key.label} failed for infrastructure reasons "
                    f"{self.state.infra[key]} times; last: {result.reason}"
                )
            elif self.state.campaign_replacements[slot] > exp.replacement.max_per_campaign:
                self.state.stop_reason = (
                    f"trial {key.label} failed for infrastructure reasons, and its retry "
                    f"would be replacement {self.state.campaign_replacements[slot]} of a "
                    f"campaign allowing {exp.replacement.max_per_campaign} "
                    f"(replacement.max_per_campaign); last: {result.reason}"
                )
        return rec

    def _premake(self, key: TrialKey) -> None:
        """Start making the next attempt's folders while it waits for a slot (local runs)."""
        # Nothing to make (an in-process adapter's attempt, its transcript folder made):
        # no thread hop for nothing.
        if self.attempt_runner is run_attempt and self.ahead.needed(key):
            loop = asyncio.get_running_loop()
            attempt = self.state.attempts[key] + 1
            made = loop.run_in_executor(folder_pool("ahead"), self.ahead.premake, key, attempt)
            # A failure here is not the attempt's: run_attempt makes the folders again and
            # reports what goes wrong then. Retrieved, so asyncio does not warn about it.
            made.add_done_callback(lambda f: f.exception())

    def _interrupted(self, key: TrialKey, pair: Pair, attempt: int, reason: str) -> None:
        # Queued, not awaited: the task is being cancelled. run_with_signals commits
        # everything queued (GroupCommitter.aclose) before the process exits, and raises
        # the first failure among them (GroupCommitter.unstored) as the run's store error.
        result = self._bare_result(key, pair, attempt, "interrupted", reason)
        self.commits.queue(self._finished(key, AttemptRecord(result, Transcript(None))))

    async def _trial(
        self,
        key: TrialKey,
        pair: Pair,
        slots: AttemptSlots,
        remaining: int,
        on_start: Callable[[], None] = lambda: None,
    ) -> None:
        """The trial's attempts until one is not ``infra``. A retry runs next, in the slot
        the failure held: queued behind other trials, each could add an infra failure
        before this trial's second one stops the run (``infra.retries``)."""
        self._premake(key)
        async with slots.hold(remaining):
            on_start()
            while True:
                if self.state.stop_reason is not None:
                    return
                # Reserved in the slot as the attempt starts (a retry too). It may wait
                # here, slot held, for an attempt in flight to free its reservation; any
                # other attempt would reserve as much, so the slot could start none either.
                held = await self.ceiling.reserve(
                    self.rc.loaded.experiment.task(key.task).cost_per_trial_usd
                )
                if held is not None and self.state.stop_reason is not None:
                    self.ceiling.release(held)  # stopped while it waited
                    return
                if held is None:
                    break
                rec = await self._attempt(key, pair, held)
                outcome = rec.result.outcome
                if outcome != "infra" or self.state.stop_reason is not None:
                    break
                await self._finish(key, rec)  # a retry starts once this record is durable
                self.progress.note_infra()
                self._premake(key)
        if held is None:
            reason = self.ceiling.reason or "budget stop"
            self.state.budget_reason = reason
            await self._not_run(key, pair, reason)
            self.state.done.add(key)
            self.progress.advance_done("not_run")
            return
        # The slot is free, and the attempt waiting for it starts before this record is
        # staged and committed: a wave of attempts ending together (hundreds at high
        # concurrency) would otherwise stage every record, milliseconds of CPU each, while
        # the freed slots stay idle. One yield puts the waiter first; the record is queued
        # whatever happens (a cancellation here too), and committed before the run ends.
        # Under a cost ceiling the record is queued first: the journal then shows each
        # spend before the attempts whose reservations it decided.
        if self.rc.loaded.experiment.budget.cost_ceiling_usd is None:
            try:
                await asyncio.sleep(0)
            finally:
                durable = self._finish(key, rec)
        else:
            durable = self._finish(key, rec)
        await durable
        if outcome != "infra":
            self.state.done.add(key)
            self.progress.advance_done(outcome)
            return
        self.progress.note_infra()

    async def _pair(self, pair: Pair, slots: AttemptSlots, opening: asyncio.Semaphore) -> None:
        """One arm after the other, in the pair's planned order; a slot per attempt."""
        holds_opening = True

        def let_the_next_pair_open() -> None:
            nonlocal holds_opening
            if holds_opening:
                holds_opening = False
                opening.release()

        keys = [key for key in pair.trial_keys() if key not in self.state.done]
        try:
            for index, key in enumerate(keys):
                if self.state.stop_reason is not None:
                    return
                last = index == len(keys) - 1
                # Once its last arm has a slot, the pair needs no more slots: the next pair
                # opens now and queues its first arm before this slot frees (AttemptSlots).
                on_start = let_the_next_pair_open if last else lambda: None
                await self._trial(key, pair, slots, len(keys) - index, on_start)
        finally:
            let_the_next_pair_open()

    async def campaigns(self) -> None:
        """Every trial in the schedule's execution order, one attempt at a time.

        A trial's infra retry runs in place (``_trial`` loops), before the next trial; a
        resume skips the trials already done and keeps the order of the rest.
        """
        slots = AttemptSlots(1)
        pairs = {(pair.task, pair.trial): pair for pair in self.schedule.pairs}
        keys = [key for key in self.schedule.execution() if key not in self.state.done]
        for index, key in enumerate(keys):
            if self.state.stop_reason is not None:
                return
            await self._trial(key, pairs[(key.task, key.trial)], slots, len(keys) - index)

    async def execute(self, concurrency: int) -> None:
        """Run the schedule with at most ``concurrency`` attempts in flight.

        Pairs open in schedule order, at most twice as many as slots waiting for one (which
        keeps every slot busy, see :class:`AttemptSlots`), so a huge schedule is never a
        huge set of coroutines. With one slot a second open pair would only interleave
        pairs (and split more pairs at a budget stop), so pairs open one at a time.
        """
        stagger = self.rc.loaded.experiment.budget.start_stagger_s
        slots = AttemptSlots(1 if stagger > 0 else concurrency)
        opening = asyncio.Semaphore(1 if concurrency == 1 else 2 * concurrency)
        loop = asyncio.get_running_loop()
        # A staggered worker is a slot that opens later: the first attempt starts at once,
        # the second slot `stagger` seconds after it, and so on.
        openers = (
            [loop.call_later(stagger * i, slots.add) for i in range(1, concurrency)]
            if stagger > 0
            else []
        )
        running: set[asyncio.Future[None]] = set()
        failures: list[BaseException] = []

        def closed(task: asyncio.Future[None]) -> None:
            running.discard(task)
            error = None if task.cancelled() else task.exception()
            if error is not None:
                failures.append(error)  # the feeder stops opening pairs and raises it

        async with warm_servers(self.rc, self.journal):
            if self.schedule.campaigns:
                await self.campaigns()  # one at a time, whatever the concurrency
                return
            try:
                for pair in self.schedule.pairs:
                    if all(key in self.state.done for key in pair.trial_keys()):
                        continue  # finished before a resume: nothing to open
                    await opening.acquire()
                    if failures or self.state.stop_reason is not None:
                        break
                    opened = asyncio.ensure_future(self._pair(pair, slots, opening))
                    running.add(opened)
                    opened.add_done_callback(closed)
                if failures:
                    raise failures[0]
                await asyncio.gather(*running)  # raises the first error of a pair
            finally:
                # On an error or Ctrl-C, cancel the open pairs and let each queue its
                # in-flight attempt as interrupted before the warm servers go down.
                for task in running:
                    task.cancel()
                for opener in openers:
                    opener.cancel()
                await asyncio.gather(*running, return_exceptions=True)


def planned_keys(schedule: Schedule) -> list[tuple[TrialKey, Pair]]:
    return [(key, pair) for pair in schedule.pairs for key in pair.trial_keys()]
