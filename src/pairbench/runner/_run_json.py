"""run.json's content: what a run records once, with its folder, before its first attempt
(the rest of its history goes to the journal)."""

from __future__ import annotations

import hashlib
import platform
import sys
from collections.abc import Mapping
from typing import Any

from pairbench import _registry
from pairbench._clock import now_iso
from pairbench._version import __version__
from pairbench.freeze._identity import run_identities
from pairbench.runner._context import stored_agent, stored_experiment, stored_identities
from pairbench.runner._gate import Gate
from pairbench.runner._model_proxy import endpoint_identity
from pairbench.runner._prior import PriorSpend
from pairbench.runner._stages import StagedRun
from pairbench.schedule._plan import Schedule
from pairbench.spec._load import LoadedExperiment
from pairbench.spec._secrets import require_secrets
from pairbench.store._run_info import ExecutorRef, ExperimentRef, Policies, RunInfo, TaskRef


def _any_simulated(loaded: LoadedExperiment) -> bool:
    """True when any arm's adapter class declares ``simulated = True`` (reports say so)."""
    exp = loaded.experiment
    for arm in exp.arms:
        try:
            cls = _registry.load("agents", exp.arm_agent(arm).adapter)
        except Exception:
            # An adapter that cannot load fails its attempts as infra, with the reason;
            # run.json is no place to report it.
            continue
        if getattr(cls, "simulated", False) is True:
            return True
    return False


def run_info(
    loaded: LoadedExperiment,
    run_id: str,
    schedule: Schedule,
    concurrency: int,
    gate: Gate,
    executor: ExecutorRef,
    model_server: Mapping[str, Any] | None = None,
    staged: StagedRun | None = None,
    protected: Mapping[str, str] | None = None,
    prior: PriorSpend | None = None,
) -> RunInfo:
    """run.json, written once with the run folder (status and the rest: journal events)."""
    exp = loaded.experiment
    # Before anything is created: a ${env:NAME} an agent reads must be set, and long enough.
    require_secrets(exp, str(loaded.path))
    secret = exp.secret_names()
    return RunInfo(
        run_id=run_id,
        experiment=ExperimentRef(id=exp.id, version=exp.version, description=exp.description),
        experiment_file=str(loaded.path),
        canonical_hash=loaded.canonical_hash,
        experiment_model=stored_experiment(exp),
        arms=list(exp.arms),
        comparisons=[list(c) for c in exp.comparisons],
        tasks=[
            TaskRef(id=t.id, labels=dict(t.labels), case_set=t.case_set)
            for t in exp.tasks_in(gate.case_set)
        ],
        agents={arm: stored_agent(exp.arm_agent(arm), secret) for arm in exp.arms},
        agent_simulated=_any_simulated(loaded),
        run_seed=schedule.run_seed,
        order_policy=schedule.order_policy,
        concurrency=concurrency,
        schedule=schedule,
        planned_trials=schedule.attempts,
        policies=Policies(
            budget=exp.budget.model_dump(mode="json"), infra=exp.infra.model_dump(mode="json")
        ),
        canary_env="PAIRBENCH_CANARY",
        identities={
            "pairbench": __version__,
            "python": platform.python_version(),
            "executable": sys.executable,
            "platform": platform.platform(),
            # A secret's literal value in an arm's env or pinned env: name and SHA-256.
            **stored_identities(run_identities(loaded), exp),
            **endpoint_identity(exp.proxy),
            **({"protected": dict(protected)} if protected else {}),
        },
        started_at=now_iso(),
        executor=executor,
        case_set=gate.case_set,
        sitting=gate.sitting or None,
        lock_sha256=hashlib.sha256(gate.lock.to_bytes()).hexdigest(),
        lock_verified=gate.lock_verified,
        accepted_harness_change=gate.accepted_harness_change,
        accepted_changes=gate.accepted_changes or None,
        model_server=dict(model_server) if model_server is not None else None,
        stage=staged.stage if staged is not None else None,
        plan=staged.plan if staged is not None else None,
        prior_spend=prior,
    )
