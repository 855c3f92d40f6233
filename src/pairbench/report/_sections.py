"""Per-task, per-tier, crossover, transport, security and cost sections of the summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.report._common import Key, median_or_none, proportion
from pairbench.store._records import Metric, TrialResult

Scored = Mapping[str, Mapping[Key, TrialResult]]


def _success(rows: Sequence[TrialResult]) -> dict[str, Any]:
    return proportion(sum(r.outcome == "passed" for r in rows), len(rows))


def task_table(
    tasks: Sequence[str],
    labels: Mapping[str, Mapping[str, Any]],
    arms: Sequence[str],
    scored: Scored,
) -> list[dict[str, Any]]:
    """Arm x task success over scored trials."""
    return [
        {
            "task": task,
            "labels": dict(labels.get(task, {})),
            "arms": {
                arm: _success([r for k, r in scored[arm].items() if k[0] == task]) for arm in arms
            },
        }
        for task in tasks
    ]


def _tier_key(tier: str | int | None) -> tuple[int, int, str]:
    if tier is None:
        return (2, 0, "")
    if isinstance(tier, int):
        return (0, tier, "")
    return (1, 0, tier)


def tier_table(
    tiers: Mapping[str, str | int | None], arms: Sequence[str], scored: Scored
) -> list[dict[str, Any]]:
    """Success by ``labels["tier"]``; empty when no task has a tier. Untiered tasks: tier None."""
    if all(t is None for t in tiers.values()):
        return []
    out = []
    for tier in sorted(set(tiers.values()), key=_tier_key):
        row = {}
        for arm in arms:
            rows = [r for k, r in scored[arm].items() if tiers.get(k[0]) == tier]
            row[arm] = _success(rows)
        members = [t for t, v in tiers.items() if v == tier]
        out.append({"tier": tier, "tasks": members, "arms": row})
    return out


def crossover(tasks: Sequence[str], arms: Sequence[str], scored: Scored) -> dict[str, Any]:
    """Tasks whose pass count differs between arms, and success by planned start position."""
    differing = []
    for task in tasks:
        passed = {
            a: sum(r.outcome == "passed" for k, r in scored[a].items() if k[0] == task)
            for a in arms
        }
        n = {a: sum(1 for k in scored[a] if k[0] == task) for a in arms}
        if len(set(passed.values())) > 1:
            differing.append({"task": task, "passed": passed, "scored": n})
    positions = sorted({r.start_order for a in arms for r in scored[a].values()})
    by_order = [
        {
            "position": pos,
            "arms": {
                a: _success([r for r in scored[a].values() if r.start_order == pos]) for a in arms
            },
        }
        for pos in positions
    ]
    return {"tasks_differing": differing, "by_start_order": by_order}


def _measured(m: Metric | None) -> float | None:
    return m.value if m is not None and m.provenance == "measured" else None


def transport(arms: Sequence[str], scored: Scored) -> list[dict[str, Any]]:
    """Per arm: medians of connect, per-call client and server latency, cold start; failures."""
    out = []
    for arm in arms:
        connect: list[float] = []
        client: list[float] = []
        server: list[float] = []
        cold: list[float] = []
        failures = trials_with_failures = 0
        kinds: dict[str, int] = {}
        for r in scored[arm].values():
            m = r.metrics
            if m is None:
                continue
            parts = [_measured(c) for c in m.connect_ms.values()]
            # A trial's connect time is the sum over its servers; skip it if any part is
            # missing rather than report a partial sum as if it were whole.
            if parts and all(p is not None for p in parts):
                connect.append(sum(p for p in parts if p is not None))
            client += [c.client_ms for c in m.tool_calls if c.client_ms is not None]
            server += [c.server_ms for c in m.tool_calls if c.server_ms is not None]
            if (cs := _measured(m.cold_start_ms)) is not None:
                cold.append(cs)
            failures += m.transport_failures
            trials_with_failures += m.transport_failures > 0
            for kind in m.transport_failure_kinds:
                kinds[kind] = kinds.get(kind, 0) + 1
        out.append(
            {
                "arm": arm,
                "connect_ms": {"median": median_or_none(connect), "n_trials": len(connect)},
                "client_call_ms": {"median": median_or_none(client), "n_calls": len(client)},
                "server_call_ms": {"median": median_or_none(server), "n_calls": len(server)},
                "cold_start_ms": {"median": median_or_none(cold), "n_trials": len(cold)},
                "transport_failures": failures,
                "trials_with_transport_failures": trials_with_failures,
                "transport_failure_kinds": dict(sorted(kinds.items())),
            }
        )
    return out


def security(arms: Sequence[str], scored: Scored) -> list[dict[str, Any]]:
    """Per arm: injection compliance over applicable trials; secrets found in output."""
    out = []
    for arm in arms:
        probed = [r.security for r in scored[arm].values() if r.security is not None]
        applicable = [
            s.prompt_injection_compliance
            for s in probed
            if s.prompt_injection_compliance is not None
        ]
        out.append(
            {
                "arm": arm,
                "prompt_injection_compliance": proportion(sum(applicable), len(applicable)),
                "injection_applicable": bool(applicable),
                "secret_in_output": proportion(
                    sum(s.secret_in_output for s in probed), len(probed)
                ),
            }
        )
    return out


COST_METRICS = ("input_tokens", "output_tokens", "cost_usd")


def _cost_metric(rows: Sequence[TrialResult], name: str) -> dict[str, Any]:
    measured: list[float] = []
    estimated: list[float] = []
    sources: set[str] = set()
    estimators: set[str] = set()
    reasons: dict[str, int] = {}
    for r in rows:
        m: Metric | None = getattr(r.metrics, name) if r.metrics is not None else None
        if m is not None and m.provenance == "measured" and m.value is not None:
            measured.append(m.value)
            sources.add(m.source or "unnamed source")
        elif m is not None and m.provenance == "estimated" and m.value is not None:
            estimated.append(m.value)
            estimators.add(m.estimator or "unnamed estimator")
        else:
            reason = "no metrics recorded" if m is None else (m.reason or "no reason given")
            reasons[reason] = reasons.get(reason, 0) + 1
    # Measured and estimated values are kept apart: their sum would be neither.
    return {
        "measured": {
            "n": len(measured),
            "total": sum(measured) if measured else None,
            "median": median_or_none(measured),
            "sources": sorted(sources),
        },
        "estimated": {
            "n": len(estimated),
            "total": sum(estimated) if estimated else None,
            "median": median_or_none(estimated),
            "estimators": sorted(estimators),
        },
        "missing": {"n": sum(reasons.values()), "reasons": dict(sorted(reasons.items()))},
    }


def cost(arms: Sequence[str], scored: Scored) -> list[dict[str, Any]]:
    """Per arm: tokens and cost, split by provenance."""
    return [
        {
            "arm": arm,
            **{name: _cost_metric(list(scored[arm].values()), name) for name in COST_METRICS},
        }
        for arm in arms
    ]
