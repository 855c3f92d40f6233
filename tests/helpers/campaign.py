"""Small campaign experiments (``order: {block: campaign}``) and their plans, for tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pairbench.freeze import write_lock
from pairbench.runner import start_run
from pairbench.runner._approve import approve_plan
from pairbench.schedule import ConfirmationPlan, approve, build_confirmation_plan, write_plan
from pairbench.spec import load_experiment

TASKS = ("t2", "t0", "t1")
"""Declared order, deliberately not sorted: the locked scenario order is the declared one."""
ARMS = ("baseline", "candidate")


def campaign_experiment(root: Path, *, concurrency: int = 1, exp_id: str = "camp") -> Path:
    """A campaign experiment of three tasks and the simulated agent (instant, seeded)."""
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    agent = {
        "adapter": "simulated",
        "settings": {
            "success": {"baseline": 0.5, "candidate": 0.7},
            "latency_ms": {arm: {"median": 200, "sigma": 0.2} for arm in ARMS},
        },
    }
    listed = "\n".join(
        f"  - {{id: {t}, prompt: p.md, grader: {{name: exact-answer, args: {{expect: PASS}}}}}}"
        for t in TASKS
    )
    path = root / "experiment.yaml"
    path.write_text(
        f"id: {exp_id}\nversion: '1'\norder: {{block: campaign}}\n"
        f"budget: {{trial_timeout_s: 30, concurrency: {concurrency}}}\n"
        f"comparisons: [[baseline, candidate]]\n"
        f"agent: {json.dumps(agent)}\narms: {{baseline: {{}}, candidate: {{}}}}\n"
        f"tasks:\n{listed}\n",
        encoding="utf-8",
    )
    return path


def plan_for(
    exp: Path,
    n_pairs: int,
    *,
    run_seed: int = 11,
    protocol_hash: str | None = None,
    screening_run: str = "camp-20260101T000000Z-000000",
) -> ConfirmationPlan:
    """A confirmation plan for ``exp`` (unapproved), as ``pairbench plan`` would build it."""
    loaded = load_experiment(exp)
    return build_confirmation_plan(
        experiment=loaded.experiment.id,
        protocol_hash=protocol_hash or loaded.canonical_hash,
        screening_run=screening_run,
        n_pairs=n_pairs,
        run_seed=run_seed,
        scenarios=[t.id for t in loaded.experiment.tasks],
        screening_campaign_s=1.0,
        trial_timeout_s=30.0,
        arms=ARMS,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def screened(exp: Path) -> str:
    """``exp`` frozen (once) and screened under its lock (once, in ``screening-runs/`` beside
    it): the screening run's id, which the ledger holds with its model endpoint."""
    if not (exp.parent / "experiment.lock.json").is_file():
        write_lock(load_experiment(exp), servers=False)
    runs = exp.parent / "screening-runs"
    done = sorted(runs.iterdir()) if runs.is_dir() else []
    if done:
        return done[0].name
    return start_run(exp, runs, stage="screening", run_seed=5).run_id


def approved_plan(
    exp: Path, path: Path, n_pairs: int, *, run_seed: int = 11, protocol_hash: str | None = None
) -> ConfirmationPlan:
    """``plan_for`` a screening of ``exp`` under its lock, written to ``path`` and approved
    by ``Ada`` (``pairbench approve``: recorded in the ledger). With ``protocol_hash`` (a
    plan for another protocol, which the ledger would refuse to approve) only the plan file
    records the approval."""
    at = datetime(2026, 1, 2, tzinfo=UTC)
    if protocol_hash is not None:
        write_plan(path, plan_for(exp, n_pairs, run_seed=run_seed, protocol_hash=protocol_hash))
        return approve(path, "Ada", at=at)
    plan = plan_for(exp, n_pairs, run_seed=run_seed, screening_run=screened(exp))
    write_plan(path, plan)
    return approve_plan(exp, path, "Ada", at=at)


def planned_execution(plan: ConfirmationPlan) -> list[str]:
    """The plan's execution order as attempt keys: per pair its arms' campaigns, each
    running every scenario in the plan's order."""
    return [
        f"{arm}/{task}/{k}"
        for k, order in enumerate(plan.order)
        for arm in order
        for task in plan.scenarios
    ]
