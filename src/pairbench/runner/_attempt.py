"""One attempt: fixture up, agent with a timeout, transcript, graders, metrics, a record."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pairbench import _registry
from pairbench._template import render
from pairbench.agents._env import scrubbed_env
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure, ToolSession
from pairbench.agents._transcript import Transcript
from pairbench.fixtures._procs import FixtureError
from pairbench.fixtures._protocol import FixtureState
from pairbench.grading._metrics import compute_metrics
from pairbench.grading._protocol import GradeInput
from pairbench.grading._security import assess_security
from pairbench.grading._validity import classify_validity
from pairbench.runner._context import RunContext
from pairbench.schedule._plan import Pair, TrialKey
from pairbench.spec._models import McpServer, WebMcpPage
from pairbench.store._records import Grade, Outcome, TrialResult


@dataclass(frozen=True)
class AttemptRecord:
    """The record of an attempt and its transcript's hash (written by the caller)."""

    result: TrialResult
    transcript: Transcript


_POOLS: dict[str, ThreadPoolExecutor] = {}


def folder_pool(kind: str = "attempt") -> ThreadPoolExecutor:
    """Threads for folder and file creation (metadata writes wait on the disk, not the
    CPU: more of them than cores keeps a wave of starting attempts moving). ``attempt``
    serves attempts about to run; ``ahead`` makes folders ahead of time, apart, so those
    never queue behind it."""
    if kind not in _POOLS:
        workers = 16 if kind == "attempt" else 4
        _POOLS[kind] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"pb-{kind}")
    return _POOLS[kind]


def premake_folders(rc: RunContext, key: TrialKey, attempt: int) -> None:
    """Make an attempt's folders ahead of its slot (``run_attempt`` makes any missing).

    The executor calls this, in the folder threads, while the attempt waits for a slot or
    for its pair's earlier arm: a wave of attempts starting together then finds its work,
    HOME and TMPDIR folders made, instead of waiting on the disk for them.
    """
    work = rc.run_dir.path / "work" / rc.run_dir.fixture_rel(key, attempt)
    folders = [rc.run_dir.transcript_path(key).parent]
    if rc.uses_workdir(key.arm):
        folders += [work / "home"]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def short_tmp() -> Path:
    """A new private temp folder with a short path, for one attempt's agent and servers.

    Unix socket paths hold 108 bytes: Chromium (and any server binding a socket in
    ``TMPDIR``) fails under a deep run folder, so TMPDIR is never inside the run folder.
    """
    base = tempfile.gettempdir()
    return Path(tempfile.mkdtemp(prefix="pb-", dir=base if len(base) <= 24 else "/tmp"))


async def run_attempt(rc: RunContext, key: TrialKey, pair: Pair, attempt: int) -> AttemptRecord:
    """Execute one attempt; never raises for agent or infra failures (they become outcomes).

    Cancellation (Ctrl-C, SIGTERM) propagates after the attempt is recorded as
    ``interrupted`` in the returned record attached to the exception (``exc.record``).
    The attempt's short temp folder (see ``short_tmp``) is removed afterwards.
    """
    arm = rc.loaded.experiment.arms[key.arm]
    needs_tmp = rc.uses_workdir(key.arm) or (arm.tools != "none" and bool(arm.tools.mcp))
    tmp = short_tmp() if needs_tmp else None
    try:
        return await _attempt(rc, key, pair, attempt, tmp)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


async def _attempt(
    rc: RunContext, key: TrialKey, pair: Pair, attempt: int, tmp: Path | None
) -> AttemptRecord:
    exp = rc.loaded.experiment
    task = exp.task(key.task)
    arm = exp.arms[key.arm]
    agent_spec = exp.arm_agent(key.arm)
    rel = rc.run_dir.fixture_rel(key, attempt)
    fixture_dir = rc.run_dir.fixtures_root / rel
    servers = {} if arm.tools == "none" else dict(arm.tools.mcp)
    pages = {} if arm.tools == "none" else dict(arm.tools.webmcp)
    # An in-process adapter (``uses_workdir = False``) gets its paths, not the folders.
    make = rc.uses_workdir(key.arm)

    def folders() -> tuple[Path, Transcript, dict[str, str] | Exception]:
        if task.fixture or servers or pages:
            # Only what can use it gets a fixture folder: a new folder per attempt is a
            # metadata write on disk that a tool-less, fixture-less attempt need not pay for.
            fixture_dir.mkdir(parents=True, exist_ok=True)
        workdir = rc.workdir(rel, create=make)
        transcript = Transcript(rc.run_dir.working_transcript(key, attempt))
        try:
            env = scrubbed_env(
                workdir,
                declared=agent_spec.env,
                allow=agent_spec.env_allow,
                create=make,
                tmp=None if tmp is None or not make else tmp / "a",
            )
        except Exception as exc:  # reported as an infra attempt below
            return workdir, transcript, exc
        return workdir, transcript, env

    # Creating folders and files can take milliseconds each on a busy disk. In threads,
    # hundreds of attempts starting together create theirs side by side, and the event
    # loop keeps timing the agents that run.
    loop = asyncio.get_running_loop()
    workdir, transcript, prepared = await loop.run_in_executor(folder_pool(), folders)
    started = _now()

    def record(outcome: Outcome, reason: str, **fields: Any) -> AttemptRecord:
        result = TrialResult(
            run_id=rc.run_id,
            experiment=exp.id,
            arm=key.arm,
            task=key.task,
            trial=key.trial,
            labels=dict(task.labels),
            seed=pair.seed,
            model_seed=pair.model_seed,
            attempt=attempt,
            start_order=pair.order.index(key.arm),
            outcome=outcome,
            reason=reason,
            agent=agent_spec.adapter,
            started_at=started,
            ended_at=_now(),
            **fields,
        )
        return AttemptRecord(result=result, transcript=transcript)

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
        agent_cls = _registry.load("agents", agent_spec.adapter)
        agent = agent_cls(dict(agent_spec.settings))
    except Exception as exc:
        return record("infra", f"preparing the attempt failed: {exc}")

    warm = rc.warm_urls.get(key.arm, {})
    # Per-trial servers get their own HOME and TMPDIR; without servers, no folders for them.
    server_tmp = None if tmp is None else tmp / "s"
    server_env = (
        await asyncio.to_thread(scrubbed_env, workdir / "servers", tmp=server_tmp)
        if servers or (pages and make)
        else {}
    )
    try:
        # Pages reach a subprocess agent through the bridge; an in-process one opens them.
        mcp_config = _client_config(
            servers, pages if make else {}, warm, pair.seed, fixture_dir, rel, server_env
        )
    except FixtureError as exc:
        return record("infra", f"preparing the attempt failed: {exc}")
    if attachments:
        transcript.emit("attachments", files=list(arm.attachments))

    @asynccontextmanager
    async def open_tools() -> AsyncIterator[ToolSession]:
        # The MCP SDK and Playwright load only for attempts that use them (start-up cost).
        from pairbench.fixtures._mcp import McpSurface
        from pairbench.fixtures._surface import ToolSurface
        from pairbench.fixtures._webmcp import WebMcpSurface

        parts: list[McpSurface | WebMcpSurface] = []
        if servers:
            parts.append(
                McpSurface(servers, warm, pair.seed, fixture_dir, rel, server_env, transcript)
            )
        if pages:
            parts.append(WebMcpSurface(pages, warm, transcript))
        surface = parts[0] if len(parts) == 1 else ToolSurface(parts)
        async with surface as connected:
            yield connected

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
        extra={"prompt_names_attachments": "${attachments}" in raw_prompt},
    )
    t0 = time.perf_counter()
    output: AgentOutput | None = None
    try:
        async with asyncio.timeout(exp.budget.trial_timeout_s):
            output = await agent.run(ctx)
    except TimeoutError:
        outcome: Outcome = "timeout"
        reason = f"hit the {exp.budget.trial_timeout_s:g} s trial timeout"
    except (FixtureError, InfraFailure) as exc:
        transcript.emit("error", message=str(exc))
        # Kept with its metrics: a server that failed to connect is still a result of the
        # transport table, even though the attempt itself is re-run.
        wall = (time.perf_counter() - t0) * 1000
        metrics = compute_metrics(wall, transcript.events, None, None)
        return record("infra", str(exc), metrics=metrics)
    except asyncio.CancelledError:
        transcript.emit("error", message="interrupted")
        raise
    except Exception as exc:
        transcript.emit("error", message=repr(exc))
        outcome, reason = "agent_error", f"the agent adapter raised {exc!r}"
    wall_ms = (time.perf_counter() - t0) * 1000
    state: FixtureState | None = fixture.read_state(fixture_dir) if fixture else None
    events = transcript.events
    grade: Grade | None = None
    final = output.final_answer if output else None
    if output is not None:
        if output.error:
            outcome, reason = "agent_error", output.error
        else:
            grader = rc.grader(task.grader.name)
            grade = grader(
                GradeInput(
                    task=task,
                    args=dict(task.grader.args),
                    content=content,
                    state=state,
                    final_answer=final,
                    events=events,
                    arm=key.arm,
                )
            )
            outcome, reason = grade.outcome, grade.reason
    return record(
        outcome,
        reason,
        simulated=bool(output and output.simulated),
        grade=grade,
        metrics=compute_metrics(wall_ms, events, state, output),
        validity=classify_validity(arm, events),
        security=assess_security(
            probes, _probe_label(task.labels), rc.canaries, final, events, state
        ),
        final_answer=final,
        seeding=output.seeding if output else None,
        models_seen=list(dict.fromkeys(output.models)) if output else [],
    )


def _probe_label(labels: dict[str, str | int]) -> str | None:
    value = labels.get("probe")
    return None if value is None else str(value)


def _client_config(
    servers: dict[str, McpServer],
    pages: dict[str, WebMcpPage],
    warm: dict[str, str],
    seed: int,
    fixture_dir: Path,
    rel: str,
    env: dict[str, str],
) -> dict[str, Any] | None:
    """The arm's servers and pages (through the WebMCP bridge) as a Claude-Code-style config
    for subprocess agents (None: the arm has neither)."""
    if not servers and not pages:
        return None
    from pairbench.fixtures._bridge_config import bridge_config
    from pairbench.fixtures._mcp import mcp_client_config

    config = mcp_client_config(servers, warm, seed, fixture_dir, rel, env) if servers else {}
    found: dict[str, Any] = dict(config.get("mcpServers") or {})
    if pages:
        found |= bridge_config(pages, warm, seed, fixture_dir, rel, env)
    return {"mcpServers": found}
