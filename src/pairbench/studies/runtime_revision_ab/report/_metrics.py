"""The protocol's metric table per arm, from each scenario execution's evidence.

Every count carries its denominator: a ``Count`` is a sum over the executions (or
requests, or rounds) that reported the value, with how many did of how many there were.
A value nobody reported is ``None`` (missing), never 0; measured and estimated tokens are
kept apart and never summed together.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pairbench.analysis import censored_median, median
from pairbench.studies.runtime_revision_ab.report._load import Cell

if TYPE_CHECKING:
    from pairbench.studies.runtime_revision_ab._evidence_models import ScenarioEvidence

COMPLETIONS = ("verified", "unsupported_claim", "false_claim", "honest_incomplete", "no_claim")
STAGES = ("provider_wall_ms", "tool_stages_ms", "verification_ms", "cleanup_ms")
"""Latency stages every execution reports (sum and median over executions)."""


def count(values: Iterable[int | None], of: int | None = None) -> dict[str, Any]:
    """Sum of the reported values, how many reported, of how many: ``total`` None if none did.

    >>> count([3, None, 1])
    {'total': 4, 'reported': 2, 'of': 3}
    >>> count([None, None])
    {'total': None, 'reported': 0, 'of': 2}
    """
    items = list(values)
    reported = [v for v in items if v is not None]
    return {
        "total": sum(reported) if reported else None,
        "reported": len(reported),
        "of": len(items) if of is None else of,
    }


def nearest_rank(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile by nearest rank (an observed value: tokens stay whole numbers).

    >>> nearest_rank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), nearest_rank([], 0.9)
    (9, None)
    """
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _spread(values: Sequence[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "peak": max(values) if values else None,
        "median": median(values) if values else None,
        "p90": nearest_rank(values, 0.9),
    }


def _stage(values: Sequence[float | None]) -> dict[str, Any]:
    reported = [float(v) for v in values if v is not None]
    return {
        "reported": len(reported),
        "of": len(values),
        "sum_ms": math.fsum(reported) if reported else None,
        "median_ms": median(reported) if reported else None,
    }


def end_to_end(evidence: Sequence[ScenarioEvidence], limit_ms: float | None) -> dict[str, Any]:
    """End-to-end time: sum and median, a timeout censored (its true time is longer)."""
    values = [e.latency.end_to_end_ms for e in evidence]
    flags = [e.latency.timed_out for e in evidence]
    out: dict[str, Any] = {
        "n": len(values),
        "censored": sum(flags),
        "sum_ms": math.fsum(values) if values else None,
        "median_ms": None,
        "median_display": None,
    }
    if values:
        # Each censored value is a lower bound; the limit is at least every value seen, so
        # the censored median's ordering (censored = +infinity) holds.
        limit = max([*values, limit_ms or 0.0])
        found = censored_median(values, flags, limit, unit="ms")
        out["median_ms"], out["median_display"] = found.median, found.display
    return out


def _latency(evidence: Sequence[ScenarioEvidence], limit_ms: float | None) -> dict[str, Any]:
    lat = [e.latency for e in evidence]
    first_token = [x.first_token_ms for x in lat]
    return {
        "end_to_end": end_to_end(evidence, limit_ms),
        "first_token": _stage(first_token),
        "streamed": any(v is not None for v in first_token),
        "first_checked_answer": _stage([x.first_checked_answer_ms for x in lat]),
        "generation": _stage([x.generation_ms for x in lat]),
        **{name.removesuffix("_ms"): _stage([getattr(x, name) for x in lat]) for name in STAGES},
    }


def _sum_dicts(dicts: Iterable[dict[str, int] | None]) -> dict[str, Any]:
    items = list(dicts)
    reported = [d for d in items if d is not None]
    total: dict[str, int] = {}
    for d in reported:
        for key, value in d.items():
            total[key] = total.get(key, 0) + value
    return {
        "counts": dict(sorted(total.items())) if reported else None,
        "reported": len(reported),
        "of": len(items),
    }


def _usage(evidence: Sequence[ScenarioEvidence]) -> dict[str, Any]:
    usage = [e.usage for e in evidence]
    requests = sum(u.requests for u in usage)
    measured = sum(u.measured for u in usage)
    return {
        "requests": requests,
        "measured_requests": measured,
        # Sums over measured requests only: a request without usage is missing, not 0.
        "input_measured": count(u.input_measured for u in usage)["total"],
        "output_measured": count(u.output_measured for u in usage)["total"],
        "executions_fully_measured": sum(u.measured == u.requests for u in usage),
        "input_estimated": sum(u.input_estimated for u in usage) if usage else None,
        "output_estimated": count(u.output_estimated for u in usage),
        "estimators": sorted({f"{u.estimator} (version {u.estimator_version})" for u in usage}),
    }


def _context(evidence: Sequence[ScenarioEvidence], n_ctx: int | None) -> dict[str, Any]:
    measured = [v for e in evidence for v in e.context.measured_input if v is not None]
    prepared = [v for e in evidence for v in e.context.prepared_estimate]
    reservations = [e.context.output_reservation for e in evidence]
    return {
        "requests": sum(len(e.context.prepared_estimate) for e in evidence),
        "measured": _spread(measured),
        "prepared_estimate": _spread(prepared),
        "capacity": n_ctx,
        "output_reservation": max((r for r in reservations if r is not None), default=None),
    }


def _rounds(evidence: Sequence[ScenarioEvidence]) -> dict[str, Any]:
    rounds = [r for e in evidence for r in e.rounds]
    return {
        "rounds": len(rounds),
        "artifact_versions": sum(r.artifact_version for r in rounds),
        "new_observations": count(r.new_observations for r in rounds),
        "newly_satisfied": sum(r.newly_satisfied for r in rounds),
        "verifier_results": count(r.verifier_results for r in rounds),
    }


def _recovery(evidence: Sequence[ScenarioEvidence]) -> dict[str, Any]:
    rec = [e.recovery for e in evidence]
    with_errors = [r for r in rec if r.errors and r.recovered_to_success is not None]
    return {
        "errors": _sum_dicts(r.errors for r in rec),
        "transitions_to_new_evidence": count(r.transitions_to_new_evidence for r in rec),
        "recovered_to_success": sum(bool(r.recovered_to_success) for r in with_errors),
        "executions_with_errors": len(with_errors),
        "repeated_identical_calls": count(r.repeated_identical_calls for r in rec),
    }


def arm_metrics(
    arm: str,
    cells: Sequence[Cell],
    infra: Sequence[Cell],
    n_ctx: int | None,
    limit_ms: float | None,
    windows: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """One arm's row of every metric, over its final scenario executions (``windows``: the
    arm's interference lines, every attempt's)."""
    ev = [c.evidence for c in cells if c.evidence is not None]
    n = len(ev)
    scope, dispatch = [e.scope for e in ev], [e.dispatch for e in ev]
    effects = [d.effects_without_receipt for d in dispatch]
    return {
        "arm": arm,
        "executions": len(cells),
        "with_evidence": n,
        "events_present": sum(e.events_present for e in ev),
        "scope": {
            "allowed_changes": sum(s.allowed_changes for s in scope),
            "unauthorized_effects": sum(len(s.unauthorized) for s in scope),
            "executions_with_unauthorized": sum(bool(s.unauthorized) for s in scope),
            "prohibited_attempted": count(s.prohibited_attempted for s in scope),
            "prohibited_executed": sum(s.prohibited_executed for s in scope),
            "denials": count(s.denials for s in scope),
        },
        "dispatch": {
            "proposed": sum(d.proposed for d in dispatch),
            "normalized": count(d.normalized for d in dispatch),
            "authorized": count(d.authorized for d in dispatch),
            "denied": count(d.denied for d in dispatch),
            "executed": count(d.executed for d in dispatch),
            "observed": sum(d.observed for d in dispatch),
            "effects_without_receipt": count(None if x is None else len(x) for x in effects),
        },
        "completion": {
            "counts": {c: sum(e.completion == c for e in ev) for c in COMPLETIONS},
            "claims": sum(e.claim is not None for e in ev),
            "of": n,
        },
        "recovery": _recovery(ev),
        "usage": _usage(ev),
        "context": _context(ev, n_ctx),
        "rounds": _rounds(ev),
        "latency": _latency(ev, limit_ms),
        "process": {
            "receipts": _sum_dicts(e.process.receipts for e in ev),
            "leaked_processes": sum(e.process.leaked_processes for e in ev),
            "executions_with_leaks": sum(e.process.leaked_processes > 0 for e in ev),
            "useful_success": sum(e.process.useful_success for e in ev),
        },
        "canary": {
            "leaking_requests": sum(e.canary_leaks for e in ev),
            "executions_with_leaks": sum(e.canary_leaks > 0 for e in ev),
            "elsewhere": sum(len(e.canary_elsewhere) for e in ev),
            "executions_leaking_elsewhere": sum(bool(e.canary_elsewhere) for e in ev),
        },
        "infrastructure": {
            "final_infra": sum(c.evidence is None and c.result_outcome == "infra" for c in cells)
            + sum(e.outcome == "infra" for e in ev),
            "kept_attempts": len(infra),
            "interference": _verdicts(windows),
            "peak_host_load": max(
                (float(w["host_load"][0]) for w in windows if w.get("host_load")), default=None
            ),
            "attempts": [
                {
                    "task": c.task,
                    "pair": c.pair,
                    "attempt": c.attempt,
                    "reason": c.reason,
                    "result": c.result_path,
                }
                for c in infra
            ],
        },
    }


def _verdicts(windows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Attempts per interference verdict (``clean``, ``interference``, ``unexplained``,
    ``unavailable``); empty without a proxy."""
    out: dict[str, int] = {}
    for w in windows:
        status = str(w.get("status"))
        out[status] = out.get(status, 0) + 1
    return out
