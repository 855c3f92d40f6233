"""A run's start, registered in the ledger beside the lock: sittings counted, plans spent.

Under a lock, ``start_run`` holds the ledger's flock from these checks to the append of
the run's line (``registered``), then makes the run folder. So across every runs folder
that shares the committed ledger:

- a held-out set sits once per protocol version; ``--new-sitting`` appends another sitting,
  which every report of the run names;
- an approved plan is spent by its first run: a second ``run --plan`` of the same plan hash
  is refused, naming the first run; an approval the ledger does not hold (a hand-made or
  hand-recomputed one) is refused; so is one made under another lock or against another
  model endpoint than its screening ran against.

The run's line is appended before its folder exists: a start that then fails still counts,
which errs on the side of the pre-registration.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pairbench._errors import RunRefused
from pairbench.freeze._compare import _model_server as stable_model_server
from pairbench.freeze._hashing import LOCK_NAME, sha256_path
from pairbench.freeze._ledger import (
    Ledger,
    LedgerEntry,
    check_heads,
    ledger_path,
    line_sha256,
    open_ledger,
    shipped,
)
from pairbench.freeze._lock import read_lock
from pairbench.runner._gate import HELD_OUT, Gate
from pairbench.spec._load import LoadedExperiment
from pairbench.store._run_info import LedgerRef, PlanRef, RunInfo


def endpoint_of(
    loaded: LoadedExperiment,
    identities: Mapping[str, Any] | None,
    model_server: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The model endpoint's identity an approval binds: the proxy's upstream URL, what the
    proxied server reports of itself (``model_endpoint``) and the local model server (its
    model and build bytes, not where it ran)."""
    proxy = loaded.experiment.proxy
    return {
        "proxy_upstream": proxy.upstream if proxy is not None else None,
        "model_endpoint": (identities or {}).get("model_endpoint"),
        "model_server": stable_model_server(dict(model_server) if model_server else None),
    }


@contextlib.contextmanager
def ledger_of(loaded: LoadedExperiment, runs_dir: Path | None = None) -> Iterator[Ledger | None]:
    """The experiment's ledger, flock held (None without a lock). A lock frozen before
    ledgers gets one here (an ``adopt`` line); a lock that names a missing ledger, a ledger
    that does not chain, or one that lost a line a run in ``runs_dir`` appended is refused."""
    lock_file = loaded.root / LOCK_NAME
    if not lock_file.is_file() or shipped(loaded.root):
        yield None  # a built-in study run in place keeps no ledger (register_run refuses
        return  # a held-out run there)
    frozen = read_lock(lock_file)
    with open_ledger(ledger_path(lock_file), must_exist=frozen.ledger is not None) as led:
        check_heads(led, runs_dir)
        if not led.entries:
            led.append(
                led.entry(
                    "adopt",
                    sha256_path(lock_file),
                    frozen.version(),
                    canonical_hash=frozen.canonical_hash,
                )
            )
        yield led


def _where(entry: LedgerEntry) -> str:
    return f"{entry.run_id} (runs folder {entry.runs_dir}, started {entry.at})"


def count_sitting(led: Ledger | None, gate: Gate, new_sitting: bool) -> int:
    """The held-out run's sitting under the protocol version in force (0 for other runs)."""
    if gate.case_set != HELD_OUT or led is None:
        return 0
    version = led.protocol_version(gate.lock.version())
    earlier = led.sittings(version)
    if earlier and not new_sitting:
        raise RunRefused(
            f"the held-out case set already sat under protocol version {version} "
            f"({', '.join(_where(e) for e in earlier)}; ledger {led.path}): a held-out set "
            "sits once per lock, whatever --runs-dir. Pass --new-sitting for a new, "
            "separately reported sitting, or re-freeze with --new-version"
        )
    return len(earlier) + 1


def spendable_approval(led: Ledger | None, plan: PlanRef, loaded: LoadedExperiment) -> LedgerEntry:
    """The ledger's approval the plan file carries, if it is unspent and made under this
    lock; refuse otherwise, naming the first run of a spent plan."""
    if led is None:
        raise RunRefused(f"refusing {plan.file}: a confirmation runs under a lock; freeze first")
    spent = led.runs_of_plan(plan.sha256)
    if spent:
        raise RunRefused(
            f"{plan.file} (plan sha256 {plan.sha256[:16]}…) already ran as {_where(spent[0])}: "
            "an approval is spent by the plan's first run. A new confirmation needs a new "
            "plan, approved again (both approvals are shown in its report)"
        )
    at = plan.approval.at.isoformat()
    found = [
        e
        for e in led.approvals()
        if e.plan_sha256 == plan.sha256 and e.by == plan.approval.by and e.approved_at == at
    ]
    if not found:
        raise RunRefused(
            f"{plan.file}: its approval (by {plan.approval.by} at {at}) is not in the ledger "
            f"{led.path}: it was not made by `pairbench approve` under this lock. Fix: write "
            "a new plan and approve it (`pairbench approve PLAN --by NAME --experiment "
            f"{loaded.path}`)"
        )
    approval = found[-1]
    lock_sha = sha256_path(loaded.root / LOCK_NAME)
    if approval.lock_sha256 != lock_sha:
        raise RunRefused(
            f"{plan.file} was approved under lock {approval.lock_sha256[:16]}…, but "
            f"{loaded.root / LOCK_NAME} is now {lock_sha[:16]}… (re-frozen since); approve a "
            "new plan under this lock"
        )
    return approval


def check_endpoint(approval: LedgerEntry, endpoint: Mapping[str, Any], plan_file: str) -> None:
    """Refuse a confirmation whose model endpoint differs from its screening's."""
    bound = approval.endpoint or {}
    differ = sorted(k for k in {*bound, *endpoint} if bound.get(k) != endpoint.get(k))
    if differ:
        raise RunRefused(
            f"{plan_file} was approved for the model endpoint its screening "
            f"{approval.screening_run} ran against, and this run's differs in "
            f"{', '.join(differ)} (screening: {bound.get(differ[0])!r}; now: "
            f"{endpoint.get(differ[0])!r}). Run against the same server and build, or "
            "screen and plan again"
        )


def lineage(led: Ledger, approval: LedgerEntry) -> list[dict[str, Any]]:
    """Every approval of a plan from the same screening run, in ledger order."""
    return [
        {
            "seq": e.seq,
            "plan_sha256": e.plan_sha256,
            "plan_file": e.plan_file,
            "by": e.by,
            "approved_at": e.approved_at,
        }
        for e in led.approvals(approval.screening_run)
    ]


def run_entry(
    led: Ledger,
    gate: Gate,
    *,
    run_id: str,
    runs_dir: Path,
    stage: str | None,
    plan: PlanRef | None,
    endpoint: Mapping[str, Any],
) -> LedgerEntry:
    """The run's line (not yet appended)."""
    return led.entry(
        "run",
        sha256_path(led.path.parent / LOCK_NAME),
        led.protocol_version(gate.lock.version()),
        run_id=run_id,
        runs_dir=str(runs_dir.resolve()),  # where the run's folder anchors its line
        stage=stage,
        case_set=gate.case_set,
        sitting=gate.sitting or None,
        plan_sha256=plan.sha256 if plan is not None else None,
        endpoint=dict(endpoint),
        accepted_changes=[c["name"] for c in gate.accepted_changes] or None,
    )


def run_ref(
    led: Ledger,
    entry: LedgerEntry,
    *,
    new_sitting: bool,
    approvals: list[dict[str, Any]],
) -> LedgerRef:
    """What run.json records of the run's line (``entry``, not yet appended)."""
    line = line_sha256(entry.line())
    return LedgerRef(
        file=str(led.path.resolve()),
        seq=entry.seq,
        line_sha256=line,
        first_line_sha256=led.first_line_sha256 or line,
        protocol_version=entry.protocol_version,
        sitting=entry.sitting,
        new_sitting=new_sitting and entry.sitting is not None,
        approvals=approvals,
    )


def register_run(
    led: Ledger | None,
    loaded: LoadedExperiment,
    gate: Gate,
    *,
    run_id: str,
    runs_dir: Path,
    stage: str | None,
    plan: PlanRef | None,
    new_sitting: bool,
    build: Callable[[Gate], RunInfo],
) -> RunInfo:
    """run.json's record, built by ``build`` with the sitting the ledger counts, checked
    against the plan's approval, and the run's line appended to the ledger (``led``, its
    flock held by the caller until the run folder exists)."""
    if led is None:
        if gate.case_set == HELD_OUT and shipped(loaded.root):
            raise RunRefused(
                f"{loaded.path} is a built-in study inside pairbench, which keeps no ledger, "
                "so a held-out sitting there could not be counted. Fix: `pairbench init DIR "
                "--from <study>`, freeze the copy and run its held-out set"
            )
        return build(gate)
    gate = replace(gate, sitting=count_sitting(led, gate, new_sitting))
    approval = spendable_approval(led, plan, loaded) if plan is not None else None
    info = build(gate)  # reads the model endpoint's identity (once, here)
    endpoint = endpoint_of(loaded, info.identities, info.model_server)
    if approval is not None and plan is not None:
        check_endpoint(approval, endpoint, plan.file)
    entry = run_entry(
        led, gate, run_id=run_id, runs_dir=runs_dir, stage=stage, plan=plan, endpoint=endpoint
    )
    approvals = lineage(led, approval) if approval is not None else []
    ref = run_ref(led, entry, new_sitting=new_sitting, approvals=approvals)
    led.append(entry)
    return info.model_copy(update={"ledger": ref})
