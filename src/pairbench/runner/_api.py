"""Start, resume and finish runs: the functions the CLI and library users call."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairbench._collector import paced_collection
from pairbench._errors import RunDirError, RunRefused
from pairbench._process import supervised
from pairbench.runner._bench_guard import frozen_benchmark
from pairbench.runner._campaigns import CAMPAIGNS_FILE, replace_incomplete, write_campaigns
from pairbench.runner._changes import check_resumable
from pairbench.runner._context import (
    RunContext,
    canary_for,
)
from pairbench.runner._folders import sweep_short_tmps
from pairbench.runner._gate import Gate, check_gate
from pairbench.runner._model_proxy import (
    endpoint_lease,
    interference_counts,
    proxy_for_run,
    require_preflight,
    sampling_defaults,
)
from pairbench.runner._prior import recorded_prior, study_prior_spend
from pairbench.runner._progress import RunProgress
from pairbench.runner._protected import check_protected
from pairbench.runner._ray import attempt_runner, check_executor
from pairbench.runner._recover import recover_state
from pairbench.runner._register import ledger_of, register_run
from pairbench.runner._run import Executor, RunState
from pairbench.runner._run_json import run_info as _run_info
from pairbench.runner._signals import run_with_signals
from pairbench.runner._stages import StagedRun, stage_run
from pairbench.runner._status import mark_ended, mark_stopped
from pairbench.schedule._plan import Schedule, build_schedule
from pairbench.schedule._seeds import derive_run_seed
from pairbench.spec._load import LoadedExperiment, load_experiment
from pairbench.spec._secrets import require_secrets
from pairbench.store._events import RunResumed, RunStarted
from pairbench.store._load_run import check_run, read_run_info
from pairbench.store._recorded import record_files
from pairbench.store._records import TrialResult
from pairbench.store._run_dir import RunDir, new_run_id
from pairbench.store._run_info import ExecutorRef
from pairbench.store._run_record import RunExecutor

if TYPE_CHECKING:
    from pairbench.proxy import SlotLease


@dataclass(frozen=True)
class RunOutcome:
    """How an invocation of ``run`` or ``resume`` ended."""

    run_dir: Path
    run_id: str
    status: str
    """``complete``, ``interrupted`` or ``stopped: <reason>``."""

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @functools.cached_property
    def results(self) -> list[TrialResult]:
        """Every stored final result, read on first use (a big run's report reads the
        trial table instead: ``pairbench.store.load_table``)."""
        return RunDir(self.run_dir).results()

    @property
    def interference(self) -> dict[str, int]:
        """With ``proxy:``: attempts per interference verdict (``clean``, ``interference``,
        ...), from ``proxy/interference.jsonl``; empty for other runs."""
        return interference_counts(RunDir(self.run_dir))


def _execute(
    loaded: LoadedExperiment,
    run_dir: RunDir,
    run_id: str,
    schedule: Schedule,
    chosen: ExecutorRef,
    state: RunState,
    concurrency: int,
    progress: bool,
    lease: SlotLease | None = None,
) -> RunOutcome:
    rc = RunContext(loaded=loaded, run_dir=run_dir, run_id=run_id, canaries=[canary_for(run_id)])
    state.prior = recorded_prior(run_dir)  # what the study counted at the start
    total = schedule.attempts
    with (
        supervised(),  # no process of the run outlives it, even if this process is killed
        frozen_benchmark(loaded, run_dir, rc),
        proxy_for_run(loaded.experiment.proxy, run_dir, lease) as proxy,
        attempt_runner(loaded, chosen.name, chosen.address) as runner,
        RunProgress(total, enabled=progress) as bar,
    ):
        rc.proxy = proxy
        if proxy is not None:
            rc.sampling_defaults = sampling_defaults(read_run_info(run_dir))
        for _ in state.done:
            bar.advance_done("", already=True)
        executor = Executor(rc, schedule, state, bar, runner)
        try:
            with paced_collection():
                status = asyncio.run(run_with_signals(executor, concurrency))
        except OSError as exc:
            # The run's own files could not be written (disk full, I/O error): say so in
            # run.json, so the run does not read as still running, and name the fix.
            mark_stopped(run_dir, f"stopped: storing the run's records failed: {exc}")
            raise RunDirError(
                f"{run_dir.path}: storing the run's records failed ({exc}). Every record "
                "committed before it is kept; free space or fix the disk, then run "
                f"`pairbench resume {run_dir.path}`"
            ) from exc
    mark_ended(run_dir, status)
    write_campaigns(run_dir, schedule)
    record_files(run_dir, [run_dir.path / CAMPAIGNS_FILE], by="campaigns")  # when there is one
    return RunOutcome(run_dir=run_dir.path, run_id=run_id, status=status)


def start_run(
    experiment: Path | LoadedExperiment,
    runs_dir: Path = Path("runs"),
    *,
    run_seed: int | None = None,
    concurrency: int | None = None,
    progress: bool = False,
    case_set: str | None = None,
    accept_harness_change: bool = False,
    new_sitting: bool = False,
    accept_changes: Sequence[str] = (),
    executor: str = "local",
    ray_address: str | None = None,
    model_server: Mapping[str, Any] | None = None,
    stage: str | None = None,
    plan: Path | None = None,
    announce: Callable[[Schedule], None] | None = None,
) -> RunOutcome:
    """Run an experiment in a new run directory (a new run ID every time).

    ``case_set="held-out"`` runs only under a lock that verifies, once per protocol version
    across every runs folder (the ledger beside the lock counts it) unless ``new_sitting``;
    a changed pairbench is refused unless ``accept_harness_change``. Under a lock, every run
    refuses a file changed since freeze unless ``accept_changes`` names it (``runner._gate``),
    and is registered in the ledger (``runner._register``).
    ``executor="ray"`` runs attempts as Ray tasks (on a new local Ray, or the cluster at
    ``ray_address``: ``auto``, ``ray://host:10001``); see docs/ray.md.
    ``model_server`` is the identity of the local model server the run uses
    (``pairbench.model.identity``), recorded in run.json and named by the report.

    An experiment with ``order: {block: campaign}`` runs as ``stage="screening"`` (one
    campaign pair) or from an approved confirmation ``plan`` (its pairs, seed and order),
    one attempt at a time (``runner._stages``); run.json records the stage, the plan's
    hash and approval, and the campaigns in the order they run. ``announce`` is called
    with the schedule once run.json is written, before the first attempt.

    **Usage**::

        outcome = start_run(Path("experiment.yaml"), Path("runs"), run_seed=1)
        outcome.run_dir, outcome.status
        start_run(Path("rra/experiment.yaml"), stage="screening")
        start_run(Path("rra/experiment.yaml"), plan=Path("plan.json"))
    """
    loaded = experiment if isinstance(experiment, LoadedExperiment) else load_experiment(experiment)
    # Before anything is made or read: a refused stage or plan leaves no trace in runs_dir.
    staged = stage_run(
        loaded,
        stage=stage,
        plan=plan,
        run_seed=run_seed,
        concurrency=concurrency,
        case_set=case_set,
    )
    check_executor(loaded, executor, ray_address)
    protected = check_protected(loaded.experiment.protected, loaded.path, runs_dir)
    # Before the gate, which reads every run.json here: a dead run's unnamed folder is none.
    RunDir.clear_abandoned(runs_dir)
    gate = check_gate(
        loaded,
        case_set,
        accept_harness_change=accept_harness_change,
        accept_changes=accept_changes,
        confirmation=staged.plan is not None,
    )
    run_id = new_run_id(loaded.experiment.id)
    if staged.run_seed is not None:
        run_seed = staged.run_seed
    seed = derive_run_seed(run_id) if run_seed is None else run_seed
    schedule = build_schedule(
        loaded.experiment,
        seed,
        gate.case_set,
        run_id=run_id,
        campaign_order=staged.campaign_order,
    )
    workers = staged.concurrency or concurrency or loaded.experiment.budget.concurrency
    if loaded.experiment.proxy is not None and workers != 1:
        raise RunRefused(
            f"--concurrency {workers}: a run with a 'proxy' runs one attempt at a time (each "
            "attempt's model requests are those made while it holds the proxy); drop --concurrency"
        )
    # The lease, then the preflight, before the run folder is made: a refusal leaves nothing.
    with endpoint_lease(loaded.experiment.proxy) as lease:
        require_preflight(loaded.experiment.proxy)
        return _start(
            loaded, runs_dir, run_id, schedule, gate, workers, executor, ray_address,
            model_server, staged, protected, announce, progress, lease, new_sitting,
        )  # fmt: skip


def _start(
    loaded: LoadedExperiment,
    runs_dir: Path,
    run_id: str,
    schedule: Schedule,
    gate: Gate,
    workers: int,
    executor: str,
    ray_address: str | None,
    model_server: Mapping[str, Any] | None,
    staged: StagedRun,
    protected: Mapping[str, str] | None,
    announce: Callable[[Schedule], None] | None,
    progress: bool,
    lease: SlotLease | None,
    new_sitting: bool,
) -> RunOutcome:
    """run.json and the run folder, then the run (under the lease ``start_run`` holds)."""
    lock_bytes = gate.lock.to_bytes()
    build = functools.partial(_run_info, loaded, run_id, schedule, workers)
    # The study's prior spend may refuse the run: asked before the ledger's line is added.
    prior = study_prior_spend(loaded, runs_dir, gate.case_set)
    rest = (ExecutorRef(name=executor, address=ray_address), model_server, staged, protected, prior)
    with ledger_of(loaded, runs_dir) as led:  # its flock: from the checks to the append
        run_info = register_run(
            led, loaded, gate, run_id=run_id, runs_dir=runs_dir, stage=staged.stage,
            plan=staged.plan, new_sitting=new_sitting, build=lambda g: build(g, *rest),
        )  # fmt: skip
    # The planned order is on disk before the first attempt starts: the folder appears under
    # its name only with its plan and lock in it, and with this process as its writer.
    files = {"lock.json": lock_bytes, "run.json": run_info.encode()}
    with RunDir.create_locked(runs_dir, run_id, files, command="pairbench run") as run_dir:
        journal = run_dir.journal()
        journal.append(
            RunStarted(
                run_id=run_id,
                planned=schedule.attempts,
                executor=run_info.executor,
            )
        )
        journal.close()
        if announce is not None:
            announce(schedule)
        return _execute(
            loaded, run_dir, run_id, schedule, run_info.executor, RunState(), workers, progress,
            lease,
        )  # fmt: skip


def resume_run(
    run_dir_path: Path,
    *,
    progress: bool = False,
    executor: str | None = None,
    ray_address: str | None = None,
) -> RunOutcome:
    """Finish only what has no final result; never re-run or overwrite a finished trial.

    Refuses when the experiment's canonical hash differs from the one in ``run.json``.
    Runs on the executor (and Ray address) recorded in ``run.json`` unless ``executor``
    or ``ray_address`` says otherwise.
    """
    run_dir = RunDir.open(run_dir_path)
    # The whole resume is one writer: another run, resume or report of this run is refused.
    with run_dir.writer_lock("pairbench resume"):
        # The runner trusts the files it wrote: a damaged one is one clear error here,
        # before anything is changed, not a traceback half-way through recovery.
        check_run(run_dir.path)
        return _resume(run_dir, progress, executor, ray_address)


def _resume(
    run_dir: RunDir, progress: bool, executor: str | None, ray_address: str | None
) -> RunOutcome:
    info = read_run_info(run_dir)
    exp_file = Path(info.experiment_file or "")
    if not exp_file.is_file():
        raise RunDirError(
            f"{run_dir.run_json}: the experiment file {exp_file} no longer exists; "
            "restore it to resume this run"
        )
    loaded = load_experiment(exp_file)
    # As at the start: a ${env:NAME} an agent reads must be set now too (one clear error,
    # nothing changed), not an infra failure per attempt.
    require_secrets(loaded.experiment, str(exp_file))
    # Nothing may have changed since the run started: the experiment, its protected
    # evidence; and the model server must be fit (one clear refusal, nothing touched).
    check_resumable(info, loaded, exp_file, run_dir.path)
    recorded = info.executor or RunExecutor(name="local")
    name = executor or recorded.name
    if ray_address is None and name == recorded.name:
        ray_address = recorded.address
    check_executor(loaded, name, ray_address)
    chosen = ExecutorRef(name=name, address=ray_address)
    schedule = Schedule.model_validate(info.schedule)
    state = recover_state(run_dir, schedule)
    # What the killed process's attempts had in /tmp (their TMPDIRs) goes now.
    sweep_short_tmps(run_dir.path)
    journal = run_dir.journal()
    journal.append(RunResumed(done=len(state.done), executor=chosen))
    journal.close()
    # A campaign the runner stopped in is kept as incomplete and re-run whole.
    replace_incomplete(run_dir, schedule, state, loaded.experiment.replacement)
    return _execute(
        loaded, run_dir, info.run_id, schedule, chosen, state, info.concurrency or 1, progress
    )
