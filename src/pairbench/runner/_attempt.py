"""One attempt: fixture up, agent with a timeout, transcript, graders, metrics, a record."""

from __future__ import annotations

import asyncio
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pairbench import _registry
from pairbench._clock import now_iso
from pairbench._confine import LimitReached
from pairbench._template import render
from pairbench.agents._env import scrubbed_env
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure
from pairbench.fixtures._procs import FixtureError, WarmServer
from pairbench.fixtures._protocol import Fixture, Probe
from pairbench.grading._metrics import compute_metrics
from pairbench.runner._bench_guard import changed_reason
from pairbench.runner._context import RunContext
from pairbench.runner._folders import folder_pool, short_tmp
from pairbench.runner._grade_attempt import grade_attempt
from pairbench.runner._model_proxy import attempt_env, attempt_evidence, attempt_label
from pairbench.runner._revisions import drift_reason, revision_broken, revision_folder
from pairbench.runner._tools import tool_opener
from pairbench.runner._trial_servers import (
    client_config,
    identities,
    start_trial_servers,
    stop_trial_servers,
)
from pairbench.schedule._plan import Pair, TrialKey
from pairbench.store._records import Outcome, TrialResult
from pairbench.store._transcript import Transcript
from pairbench.store._walk import remove_tree


@dataclass(frozen=True)
class AttemptRecord:
    """The record of an attempt and its transcript's hash (written by the caller)."""

    result: TrialResult
    transcript: Transcript


async def run_attempt(rc: RunContext, key: TrialKey, pair: Pair, attempt: int) -> AttemptRecord:
    """Execute one attempt; never raises for agent or infra failures (they become outcomes).

    Cancellation (Ctrl-C, SIGTERM) propagates after the attempt is recorded as
    ``interrupted`` in the returned record attached to the exception (``exc.record``).
    The attempt's short temp folder (see ``short_tmp``) is removed afterwards, and the
    files it left in the run folder are redacted (see ``store._redact``) once graded.
    """
    arm = rc.loaded.experiment.arms[key.arm]
    tools = arm.tools != "none" and bool(arm.tools.mcp or arm.tools.webmcp)
    needs_tmp = rc.uses_workdir(key.arm) or (arm.tools != "none" and bool(arm.tools.mcp))
    # Work and fixture folders exist only for these (see _prepare): nothing else to redact.
    exp = rc.loaded.experiment
    leaves_files = rc.uses_workdir(key.arm) or tools or bool(exp.task(key.task).fixture)
    tmp = short_tmp(rc.run_dir.path) if needs_tmp else None
    try:
        prepared = await _prepare(rc, key, pair, attempt, tmp)
        if isinstance(prepared, AttemptRecord):
            done = prepared
        else:
            try:
                ran = await _run_agent(prepared)
            finally:  # before grading: a stopped server has written all it will
                await stop_trial_servers(prepared.started)
            if exp.proxy is not None and rc.proxy is not None and isinstance(ran, _Ran):
                # The seed is proven, and the usage measured, from what reached the model,
                # whatever the agent says.
                output = attempt_evidence(
                    exp.proxy, rc.proxy, attempt_label(key, attempt), pair.model_seed,
                    prepared.at.transcript, rc.sampling_defaults, ran.output,
                )  # fmt: skip
                ran = ran._replace(output=output)
            revision = rc.revisions.get(key.arm)
            broken = proof = None
            if revision is not None:
                folder = revision_folder(rc.run_dir, key, attempt)
                transcript = prepared.at.transcript
                broken, proof = await asyncio.to_thread(
                    revision_broken, revision, folder, transcript
                )
            if broken is not None:
                # What ran was not the frozen revision: no score, and the retry meets the
                # same checkout, so the run stops naming it.
                done = prepared.at.record("infra", broken)
            else:
                done = ran if isinstance(ran, AttemptRecord) else grade_attempt(prepared, ran)
            changed = rc.guard.changed() if rc.guard is not None else []
            if changed:
                # Graded against a benchmark that changed under it: not a score.
                done = prepared.at.record("infra", changed_reason(changed, "during"))
            if proof is not None:  # in the record, whatever the outcome
                update = {"mounted_proof": proof}
                done = AttemptRecord(done.result.model_copy(update=update), done.transcript)
        # Graders and detectors have read the attempt's files: what is kept must not hold a
        # secret. In the folder threads, so the event loop keeps timing other agents; an
        # attempt that left no folder (an in-process agent without a fixture) skips the
        # thread hop, which would cost it more than all its own bookkeeping.
        if leaves_files:
            loop = asyncio.get_running_loop()
            kept = await loop.run_in_executor(folder_pool(), rc.keep_attempt_files, key, attempt)
            if kept is not None:  # the record says what was not kept, and why
                result = done.result.model_copy(update={"workspace": kept})
                done = AttemptRecord(result, done.transcript)
        return done
    except BaseException:
        # An interrupted attempt's files are kept too; a failure here must not hide why.
        with suppress(Exception):
            rc.keep_attempt_files(key, attempt)
        raise
    finally:
        if tmp is not None:
            remove_tree(tmp)  # the agent's TMPDIR: however deep it nested its folders


@dataclass(frozen=True)
class _Attempt:
    """What preparing, running and grading one attempt share, and how it is recorded."""

    rc: RunContext
    key: TrialKey
    pair: Pair
    attempt: int
    transcript: Transcript
    started: str

    def record(self, outcome: Outcome, reason: str, **fields: Any) -> AttemptRecord:
        """The attempt's record (secret values in it are redacted where it is stored:
        ``RunDir.stage_record``)."""
        fields.setdefault("servers", identities(self.transcript.events))
        result = self.rc.new_result(
            self.key, self.pair, self.attempt, outcome, reason, started_at=self.started, **fields
        )
        return AttemptRecord(result=result, transcript=self.transcript)


@dataclass(frozen=True)
class _Prepared:
    """An attempt ready to run: its agent, the context it gets, and what grading needs."""

    at: _Attempt
    agent: Any
    ctx: AgentContext
    fixture: Fixture | None
    fixture_dir: Path
    content: dict[str, Any]
    probes: list[Probe]
    started: list[WarmServer]
    """Per-trial HTTP servers (``warm: false``), stopped when the agent is done."""


class _Ran(NamedTuple):
    """How the agent's run ended: its output, or the outcome (and reason) replacing it."""

    output: AgentOutput | None
    outcome: Outcome | None
    reason: str
    wall_ms: float


async def _prepare(
    rc: RunContext, key: TrialKey, pair: Pair, attempt: int, tmp: Path | None
) -> _Prepared | AttemptRecord:
    """Folders, environment, prompt, agent and tool surface; an ``infra`` record if any
    of them cannot be made."""
    exp = rc.loaded.experiment
    task = exp.task(key.task)
    arm = exp.arms[key.arm]
    agent_spec = exp.arm_agent(key.arm)
    rel = rc.run_dir.fixture_rel(key, attempt)
    fixture_dir = rc.run_dir.fixture_folder(rel)
    servers = {} if arm.tools == "none" else dict(arm.tools.mcp)
    pages = {} if arm.tools == "none" else dict(arm.tools.webmcp)
    # An in-process adapter (``uses_workdir = False``) gets its paths, not the folders.
    make = rc.uses_workdir(key.arm)

    def folders() -> tuple[Path, Transcript, dict[str, str] | Exception, list[str]]:
        # The frozen benchmark checked here, in the thread, before the agent starts: its
        # stats would each hand the event loop's GIL to other threads and wait to get it back.
        changed = rc.guard.changed() if rc.guard is not None else []
        if task.fixture or servers or pages:
            # Only what can use it gets a fixture folder: a new folder per attempt is a
            # metadata write on disk that a tool-less, fixture-less attempt need not pay for.
            fixture_dir.mkdir(parents=True, exist_ok=True)
        workdir = rc.workdir(rel, create=make)
        transcript = Transcript(rc.run_dir.working_transcript(key, attempt), rc.redactor())
        try:
            env = scrubbed_env(
                workdir,
                declared=agent_spec.env,
                allow=agent_spec.env_allow,
                create=make,
                tmp=None if tmp is None or not make else tmp / "a",
            )
        except Exception as exc:  # reported as an infra attempt below
            return workdir, transcript, exc, changed
        return workdir, transcript, env, changed

    # Creating folders and files can take milliseconds each on a busy disk. In threads,
    # hundreds of attempts starting together create theirs side by side, and the event
    # loop keeps timing the agents that run.
    loop = asyncio.get_running_loop()
    made = folder_pool().submit(folders)
    try:
        workdir, transcript, prepared, changed = await asyncio.wrap_future(made, loop=loop)
    except asyncio.CancelledError:
        # Interrupted while the thread makes the files: the executor records this attempt
        # with no transcript, so the one the thread opens must not outlive it (an orphan
        # .partial file and an open handle). Wait for the thread (a few ms, and only on an
        # interrupt), then drop its file.
        with suppress(Exception):
            _, orphan, _, _ = made.result(timeout=10)
            orphan.close(sync=False)
            rc.run_dir.working_transcript(key, attempt).unlink(missing_ok=True)
        raise
    at = _Attempt(rc, key, pair, attempt, transcript, now_iso())

    fixture = rc.fixture(task.fixture) if task.fixture else None
    try:
        attachments = [rc.loaded.resolve(rel) for rel in arm.attachments]
        content = fixture.content(pair.seed) if fixture else {}
        probes = fixture.probes(content) if fixture else []
        # ${attachments}: the attachments' file names, as a CLI agent finds them in its
        # working folder (an in-process adapter hands the files over itself).
        names = ", ".join(p.name for p in attachments)
        values = {"fixture": content, "seed": pair.seed, "attachments": names}
        raw_prompt = rc.text(task.prompt)
        prompt = str(render(raw_prompt, values))
        plan = rc.plan(task.plan) if task.plan else None
        if isinstance(prepared, Exception):
            raise prepared
        env = prepared
        if rc.proxy is not None and exp.proxy is not None:
            rc.proxy.label = attempt_label(key, attempt)
            env |= attempt_env(exp.proxy, rc.proxy)
        if changed:
            return at.record("infra", changed_reason(changed, "before"))
        revision = rc.revisions.get(key.arm)
        if revision is not None:
            env |= revision.env(revision_folder(rc.run_dir, key, attempt))
            drift = await asyncio.to_thread(revision.drift)
            if drift:
                return at.record("infra", drift_reason(revision, "before", drift))
        agent_cls = _registry.load("agents", agent_spec.adapter)
        agent = agent_cls(dict(agent_spec.settings))
    except Exception as exc:
        return at.record("infra", f"preparing the attempt failed: {exc}")

    # Per-trial servers get their own HOME, TMPDIR and working folders under this one;
    # without servers, no folders for them.
    folder = workdir / "servers"
    server_tmp = None if tmp is None else tmp / "s"
    server_env = (
        await asyncio.to_thread(scrubbed_env, folder, tmp=server_tmp)
        if servers or (pages and make)
        else {}
    )
    root = rc.loaded.root
    try:
        started = await start_trial_servers(
            servers, rc.run_dir.fixtures_root, server_env, folder, transcript
        )
    except FixtureError as exc:
        return at.record("infra", f"preparing the attempt failed: {exc}")
    warm = {**rc.warm_urls.get(key.arm, {}), **{s.name: s.url for s in started}}
    try:
        # Pages reach a subprocess agent through the bridge; an in-process one opens them.
        shown = pages if make else {}
        mcp_config = client_config(
            servers, shown, warm, pair.seed, fixture_dir, rel, server_env, folder, root
        )
    except FixtureError as exc:
        await stop_trial_servers(started)
        return at.record("infra", f"preparing the attempt failed: {exc}")
    if attachments:
        transcript.emit("attachments", files=list(arm.attachments))
    if rc.placement is not None:  # on Ray: where it ran, and whose warm servers it used
        transcript.emit("placement", node=rc.placement[0], warm_node=rc.placement[1])

    open_tools = tool_opener(
        servers, pages, warm, pair.seed, fixture_dir, rel, server_env, transcript,
        folder=folder, root=root,
    )  # fmt: skip

    ctx = AgentContext(
        run_id=rc.run_id,
        arm=key.arm,
        task=key.task,
        trial=key.trial,
        seed=pair.seed,
        model_seed=pair.model_seed,
        prompt=prompt,
        content=content,
        env=env,
        workdir=workdir,
        transcript=transcript,
        settings=dict(agent_spec.settings),
        timeout_s=exp.budget.trial_timeout_s,
        has_tools=bool(servers or pages),
        open_tools=open_tools if servers or pages else None,
        mcp_config=mcp_config,
        plan=plan,
        signals=rc.signals,
        attachments=attachments,
        shared_dir=rc.run_dir.trial_shared(key),
        attempt=attempt,
        extra={"prompt_names_attachments": "${attachments}" in raw_prompt},
        experiment_root=rc.loaded.root,
        worst_cost_usd=exp.budget.cost_per_trial_usd
        if task.cost_per_trial_usd is None
        else task.cost_per_trial_usd,
        limits=exp.arm_limits(key.arm),
    )
    return _Prepared(at, agent, ctx, fixture, fixture_dir, content, probes, started)


async def _run_agent(prep: _Prepared) -> _Ran | AttemptRecord:
    """The agent under the trial timeout; a failure becomes its outcome (an ``infra`` one
    its record), never a raise (but cancellation, which propagates)."""
    timeout_s = prep.ctx.timeout_s
    transcript = prep.at.transcript
    t0 = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            output: AgentOutput = await prep.agent.run(prep.ctx)
    except TimeoutError:
        reason = f"hit the {timeout_s:g} s trial timeout"
        return _Ran(None, "timeout", reason, (time.perf_counter() - t0) * 1000)
    except LimitReached as exc:
        # The agent's own failure, like a timeout: scored as a miss, never re-run.
        transcript.emit("limit_reached", limit=exc.kind, message=str(exc))
        return _Ran(None, exc.kind, str(exc), (time.perf_counter() - t0) * 1000)
    except (FixtureError, InfraFailure) as exc:
        transcript.emit("error", message=str(exc))
        # Kept with its metrics: a server that failed to connect is still a result of the
        # transport table, even though the attempt itself is re-run.
        wall = (time.perf_counter() - t0) * 1000
        metrics = compute_metrics(wall, transcript.events, None, None)
        return prep.at.record("infra", str(exc), metrics=metrics)
    except asyncio.CancelledError:
        transcript.emit("error", message="interrupted")
        raise
    except Exception as exc:
        transcript.emit("error", message=repr(exc))
        reason = f"the agent adapter raised {exc!r}"
        return _Ran(None, "agent_error", reason, (time.perf_counter() - t0) * 1000)
    return _Ran(output, None, "", (time.perf_counter() - t0) * 1000)
