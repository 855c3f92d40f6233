"""Approving a confirmation plan under the lock: bound to what it was made for, and recorded.

``schedule.approve`` writes who approved which plan hash into the plan file. That alone is a
self-hash anyone can recompute, so the approval the runner honours is the ledger's line
(``runner._register``): it binds the plan's hash, the lock's hash, the experiment's
canonical hash and the model endpoint the screening ran against, and the first run of the
plan spends it. Stripping an approval and approving again is a second line, shown in the
confirmation's report beside the first.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pairbench._errors import RunRefused
from pairbench.freeze._hashing import LOCK_NAME, sha256_path
from pairbench.freeze._verify import verify_experiment
from pairbench.runner._register import endpoint_of, ledger_of
from pairbench.schedule._approval import PlanError, approve, read_plan
from pairbench.schedule._confirmation import ConfirmationPlan, plan_sha256
from pairbench.spec._load import LoadedExperiment, load_experiment
from pairbench.store._load_run import read_run_info
from pairbench.store._run_dir import RunDir


def _screening_endpoint(
    loaded: LoadedExperiment, plan: ConfirmationPlan, screening: Path | None
) -> dict[str, object]:
    if screening is None:
        raise PlanError(
            f"the screening run {plan.screening_run} is not in the ledger (it ran before the "
            "freeze): name its folder with --screening RUN_DIR, so the approval binds the model "
            "endpoint it ran against"
        )
    info = read_run_info(RunDir.open(screening))
    if info.run_id != plan.screening_run:
        raise PlanError(
            f"--screening {screening} is run {info.run_id}, but the plan was made from "
            f"{plan.screening_run}; name that run's folder"
        )
    ident = info.identities.model_dump() if info.identities is not None else {}
    return endpoint_of(loaded, ident, info.model_server)


def approve_plan(
    experiment: Path | LoadedExperiment,
    plan_path: Path,
    by: str,
    *,
    screening: Path | None = None,
    at: datetime | None = None,
) -> ConfirmationPlan:
    """Approve the plan in ``plan_path`` as ``by``, under ``experiment``'s lock: the ledger
    beside the lock records the approval first, then the plan file does.

    **Usage**::

        approve_plan(Path("experiment.yaml"), Path("plan.json"), "Ada")
        start_run(Path("experiment.yaml"), plan=Path("plan.json"))   # spends it

    Raises:
        RunRefused: no lock, a lock that does not verify, a plan of another protocol, or
            a plan hash that already ran (naming the run).
        PlanError: the plan cannot be approved (``schedule.approve``), or the screening's
            endpoint is unknown (not in the ledger and no ``screening`` folder given).
        LedgerError: the ledger does not chain, or is missing under a lock that names it.
    """
    loaded = experiment if isinstance(experiment, LoadedExperiment) else load_experiment(experiment)
    plan = read_plan(plan_path)
    changed = [m for m in verify_experiment(loaded) if m.kind != "harness"]
    if changed:
        raise RunRefused(
            f"refusing to approve {plan_path}: {changed[0]}; a plan is approved under a lock "
            f"that verifies: freeze the experiment (`pairbench freeze {loaded.path}`) or "
            "restore the frozen files"
        )
    if plan.protocol_hash != loaded.canonical_hash or plan.experiment != loaded.experiment.id:
        raise RunRefused(
            f"{plan_path} is a plan for {plan.experiment} at protocol hash "
            f"{plan.protocol_hash[:16]}…, not for {loaded.path} ({loaded.experiment.id}, "
            f"{loaded.canonical_hash[:16]}…)"
        )
    sha = plan_sha256(plan)
    with ledger_of(loaded) as led:
        assert led is not None  # verify_experiment refuses a missing lock above
        spent = led.runs_of_plan(sha)
        if spent:
            first = spent[0]
            raise RunRefused(
                f"{plan_path} (plan sha256 {sha[:16]}…) already ran as {first.run_id} (runs "
                f"folder {first.runs_dir}): a plan runs once; write a new plan"
            )
        screened = led.run(plan.screening_run)
        if screened is not None and screened.endpoint is not None:
            endpoint = dict(screened.endpoint)
        else:
            endpoint = _screening_endpoint(loaded, plan, screening)
        when = at or datetime.now(UTC)
        lock_file = loaded.root / LOCK_NAME
        entry = led.entry(
            "approval",
            sha256_path(lock_file),
            led.protocol_version(loaded.experiment.version),
            canonical_hash=loaded.canonical_hash,
            plan_sha256=sha,
            plan_file=str(plan_path),
            by=by.strip(),
            approved_at=when.isoformat(),
            screening_run=plan.screening_run,
            endpoint=endpoint,
        )
        if plan.approval is not None or not by.strip():
            return approve(plan_path, by, at=when)  # refuses, naming why
        led.append(entry)
        return approve(plan_path, by, at=when)
