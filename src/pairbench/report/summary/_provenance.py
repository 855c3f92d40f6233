"""What the run proves about itself: case set, lock, accepted harness change, who ran each
arm (agent, model, tool-discovery mode and version, and the models seen), seeding, and
manual review notes (shown beside the machine score, never changing it)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pairbench.report.summary._frame import Frame
from pairbench.store._run_record import RunRecord


def run_provenance(run: RunRecord) -> dict[str, Any]:
    """The pre-registration facts from run.json (None where the run predates them)."""
    return {
        "case_set": run.case_set,
        "sitting": run.sitting,
        "lock_sha256": run.lock_sha256,
        "lock_verified": run.lock_verified,
        "accepted_harness_change": run.accepted_harness_change,
        "model_server": _model_server(run.model_server),
        "imported": run.imported,
        **_ledger(run),
    }


def _ledger(run: RunRecord) -> dict[str, Any]:
    """What the ledger beside the lock said of the run: the protocol version, whether its
    sitting was asked for (``--new-sitting``), the changes it accepted, and for a
    confirmation the plan, its approver, its screening and every approval of its lineage."""
    ledger = run.ledger or {}
    plan = run.plan
    plan_out = None
    if plan:
        approval = plan.get("approval") or {}
        plan_out = {
            "file": plan.get("file"),
            "sha256": plan.get("sha256"),
            "approved_by": approval.get("by"),
            "approved_at": approval.get("at"),
            "screening_run": plan.get("screening_run"),
            "approvals": list(ledger.get("approvals") or []),
        }
    return {
        "protocol_version": ledger.get("protocol_version"),
        "ledger": (
            {k: ledger.get(k) for k in ("file", "seq", "line_sha256")}
            | {"new_sitting": bool(ledger.get("new_sitting"))}
            if ledger
            else None
        ),
        "plan": plan_out,
        "accepted_changes": list(run.accepted_changes or []) or None,
    }


def _model_server(identity: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the report names of the local model server: which model, which build."""
    if not identity:
        return None
    model, build = identity.get("model") or {}, identity.get("llama_cpp") or {}
    props, serve = identity.get("props") or {}, identity.get("serve") or {}
    return {
        "model": model.get("header", {}).get("general.name") or model.get("package"),
        "model_package": f"{model.get('package')} {model.get('version')}",
        "model_sha256": model.get("sha256"),
        "llama_cpp": f"{build.get('sdist_filename')} (package {build.get('version')})",
        "llama_cpp_sha256": build.get("sdist_sha256"),
        "binary_sha256": build.get("binary_sha256"),
        "build_info": props.get("build_info"),
        "slots": serve.get("slots"),
        "cache_prompt": serve.get("cache_prompt"),
    }


def _text(value: Any) -> str | None:
    """An identity as text: a string as it is, anything else (``false``, 3) as JSON."""
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _models_seen(frame: Frame, arm: int) -> list[str]:
    """Distinct model ids over every record of the arm (final and kept), sorted: the rows
    are in commit order, which concurrency makes vary between runs."""
    table = frame.table
    rows = frame.of_arm(np.concatenate([frame.final, frame.kept]), arm)
    codes = np.unique(table.columns["models"][rows])
    cats = table.categories["models"]
    return sorted({m for c in codes.tolist() if c >= 0 for m in json.loads(cats[c])})


def arm_identities(frame: Frame) -> list[dict[str, Any]]:
    """Per arm in declared order, from run.json ``identities.arms.<arm>`` (falling back to
    ``agents.<arm>`` for runs that predate identities), with the models its records saw."""
    run = frame.run
    identities = run.arm_identities()
    out = []
    for i, arm in enumerate(frame.arms):
        ident: Mapping[str, Any] = identities.get(arm) or {}
        agent = run.agents.get(arm)
        settings: Mapping[str, Any] = (agent.settings if agent else None) or {}
        out.append(
            {
                "arm": arm,
                "agent": _text(ident.get("agent", agent.adapter if agent else None)),
                "model": _text(ident.get("model", settings.get("model"))),
                "tool_discovery": _text(ident.get("tool_discovery")),
                "agent_version": _text(ident.get("agent_version")),
                "models_seen": _models_seen(frame, i),
            }
        )
    return out


def seeding(frame: Frame) -> list[dict[str, Any]]:
    """Per arm: how many trials were provably seeded, unseeded, or had no model."""
    table = frame.table
    status, reason = table.columns["seeding"], table.columns["seeding_reason"]
    reasons_text = table.categories["seeding_reason"]
    out = []
    for i, arm in enumerate(frame.arms):
        rows = frame.of_arm(frame.scored, i)
        mine = status[rows]
        seeded = int((mine == table.code_of("seeding", "seeded")).sum())
        unseeded = int((mine == table.code_of("seeding", "unseeded")).sum())
        # The five most common reasons, ties in the order they first appear (as Counter).
        given = reason[rows][reason[rows] >= 0]
        codes, first, counts = np.unique(given, return_index=True, return_counts=True)
        ranked = sorted(
            zip(codes.tolist(), first.tolist(), counts.tolist(), strict=True),
            key=lambda c: (-c[2], c[1]),
        )
        out.append(
            {
                "arm": arm,
                "seeded": seeded,
                "unseeded": unseeded,
                "not_applicable": len(rows) - seeded - unseeded,
                "reasons": {reasons_text[c]: n for c, _, n in ranked[:5]},
            }
        )
    return out


def mounted_proof(frame: Frame) -> list[dict[str, Any]]:
    """Per arm, the mounted-byte proofs of every recorded attempt; ``[]`` when none has one."""
    table = frame.table
    status, coverage = table.columns["mounted_proof"], table.columns["mounted_coverage"]
    if not (status >= 0).any():
        return []
    names, spans = table.categories["mounted_proof"], table.categories["mounted_coverage"]
    everything = np.concatenate([frame.final, frame.kept])
    out = []
    for i, arm in enumerate(frame.arms):
        rows = frame.of_arm(everything, i)
        mine = [names[c] for c in status[rows].tolist() if c >= 0]
        spread = [spans[c] for c in coverage[rows].tolist() if c >= 0]
        row: dict[str, Any] = {"arm": arm}
        for name in ("ok", "mismatch", "shadowed", "unavailable"):
            row[name] = mine.count(name)
        row["not_proven"] = len(rows) - len(mine)
        row["coverage"] = {c: spread.count(c) for c in sorted(set(spread))}
        out.append(row)
    return out


def manual_review(frame: Frame, reviews: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Review notes from ``manual_review.json`` beside each trial's machine outcome."""
    notes = [n for n in reviews if isinstance(n, Mapping)]
    if not notes:
        return []
    table, final = frame.table, frame.final
    arms, tasks = table.columns["arm"][final], table.columns["task"][final]
    trials, outcomes = table.columns["trial"][final], table.columns["outcome"][final]
    out = []
    for note in notes:
        key = (str(note.get("arm")), str(note.get("task")), int(note.get("trial", -1)))
        hit = np.flatnonzero(
            (arms == table.code_of("arm", key[0]))
            & (tasks == table.code_of("task", key[1]))
            & (trials == key[2])
        )
        machine = table.categories["outcome"][outcomes[hit[-1]]] if len(hit) else None
        out.append(
            {
                "arm": key[0],
                "task": key[1],
                "trial": key[2],
                "machine_outcome": machine,
                **{k: str(note.get(k, "")) for k in ("verdict", "note", "reviewer")},
            }
        )
    return out
