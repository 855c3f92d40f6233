"""Per-task, per-tier, crossover, transport, model-request, security and cost sections of
the summary."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.report.summary._common import median_or_none, proportion
from pairbench.report.summary._frame import Frame
from pairbench.store._table import CALL_TOOL, REQUEST_NUMBERS, TrialTable

Counts = npt.NDArray[np.int64]


def _grid(frame: Frame) -> tuple[Counts, Counts]:
    """Scored trials and passes per (arm, task), as two arms x tasks count matrices."""
    rows = frame.scored
    shape = (len(frame.arms), len(frame.tasks))
    cell = frame.arm[rows] * shape[1] + frame.task[rows]
    size = shape[0] * shape[1]
    n = np.bincount(cell, minlength=size).reshape(shape)
    k = np.bincount(cell[frame.mask("passed")[rows]], minlength=size).reshape(shape)
    return n, k


def task_table(frame: Frame, labels: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Arm x task success over scored trials."""
    n, k = _grid(frame)
    ns, ks = n.T.tolist(), k.T.tolist()
    return [
        {
            "task": task,
            "labels": dict(labels.get(task, {})),
            "arms": {arm: proportion(ks[t][i], ns[t][i]) for i, arm in enumerate(frame.arms)},
        }
        for t, task in enumerate(frame.tasks)
    ]


def _tier_key(tier: str | int | None) -> tuple[int, int, str]:
    if tier is None:
        return (2, 0, "")
    if isinstance(tier, int):
        return (0, tier, "")
    return (1, 0, tier)


def tier_table(frame: Frame, tiers: Mapping[str, str | int | None]) -> list[dict[str, Any]]:
    """Success by ``labels["tier"]``; empty when no task has a tier. Untiered tasks: tier None."""
    if all(t is None for t in tiers.values()):
        return []
    n, k = _grid(frame)
    of_task = [tiers.get(t) for t in frame.tasks]
    out = []
    for tier in sorted(set(tiers.values()), key=_tier_key):
        cols = np.array([v == tier for v in of_task], dtype=np.bool_)
        row = {
            arm: proportion(int(k[i, cols].sum()), int(n[i, cols].sum()))
            for i, arm in enumerate(frame.arms)
        }
        members = [t for t, v in tiers.items() if v == tier]
        out.append({"tier": tier, "tasks": members, "arms": row})
    return out


def crossover(frame: Frame) -> dict[str, Any]:
    """Tasks whose pass count differs between arms, and success by planned start position."""
    n, k = _grid(frame)
    differing = []
    spread = (k.max(axis=0) != k.min(axis=0)) if len(frame.arms) else np.zeros(0, np.bool_)
    for t in np.flatnonzero(spread).tolist():
        passed = {a: int(k[i, t]) for i, a in enumerate(frame.arms)}
        scored = {a: int(n[i, t]) for i, a in enumerate(frame.arms)}
        differing.append({"task": frame.tasks[t], "passed": passed, "scored": scored})
    rows = frame.scored
    order = frame.table.columns["start_order"][rows]
    passed_rows = frame.mask("passed")[rows]
    by_order = []
    for pos in np.unique(order).tolist():
        at = order == pos
        arms = {}
        for i, arm in enumerate(frame.arms):
            mine = at & (frame.arm[rows] == i)
            arms[arm] = proportion(int(passed_rows[mine].sum()), int(mine.sum()))
        by_order.append({"position": pos, "arms": arms})
    return {"tasks_differing": differing, "by_start_order": by_order}


def _median_n(values: npt.NDArray[np.float64], count: str) -> dict[str, Any]:
    """The median of the measured values (NaN: not measured), and how many (key ``count``)."""
    measured = values[~np.isnan(values)]
    return {"median": median_or_none(measured), count: len(measured)}


def _by_tool(
    table: TrialTable, mine: npt.NDArray[np.bool_], tools: npt.NDArray[np.int32]
) -> list[dict[str, Any]]:
    """Per tool among ``mine`` (a mask over the calls): client latency pooled over its calls,
    and the median over trials of its cold start; tools sorted by name."""
    calls, names = table.calls, table.categories[CALL_TOOL]
    out = []
    for code in sorted(np.unique(tools[mine & (tools >= 0)]).tolist(), key=names.__getitem__):
        of_tool = mine & (tools == code)
        client, cold = calls["client_ms"][of_tool], calls["cold_start_ms"][of_tool]
        out.append(
            {
                "tool": names[code],
                "calls": int(of_tool.sum()),
                "client_call_ms": _median_n(client, "n_calls"),
                "cold_start_ms": _median_n(cold, "n_trials"),
            }
        )
    return out


def transport(frame: Frame) -> list[dict[str, Any]]:
    """Per arm: medians of connect, per-call client and server latency, cold start (pooled
    and per tool); failures."""
    cols, table = frame.table.columns, frame.table
    calls = table.calls
    measured_cold = table.is_value("cold_start_ms_prov", "measured")
    with_metrics = frame.scored[cols["metrics"][frame.scored]]
    # Kept infra attempts are not scored, but a server under test that failed to connect is
    # still a result of its transport: counted apart, never pooled with scored trials.
    kept_infra = frame.kept[frame.mask("infra")[frame.kept]]
    kept_infra = kept_infra[cols["metrics"][kept_infra]]
    out = []
    for i, arm in enumerate(frame.arms):
        infra_rows = frame.of_arm(kept_infra, i)
        infra_failures = cols["transport_failures"][infra_rows]
        rows = frame.of_arm(with_metrics, i)
        connect = cols["connect_ms"][rows]
        cold = cols["cold_start_ms"][rows][measured_cold[rows]]
        mine = np.isin(calls["row"], rows)
        client, server = calls["client_ms"][mine], calls["server_ms"][mine]
        failures = cols["transport_failures"][rows]
        kinds: dict[str, int] = {}
        codes, repeats = np.unique(cols["failure_kinds"][rows], return_counts=True)
        for code, times in zip(codes.tolist(), repeats.tolist(), strict=True):
            if code < 0:
                continue
            for kind in json.loads(table.categories["failure_kinds"][code]):
                kinds[kind] = kinds.get(kind, 0) + times
        out.append(
            {
                "arm": arm,
                "connect_ms": _median_n(connect, "n_trials"),
                "client_call_ms": _median_n(client, "n_calls"),
                "server_call_ms": _median_n(server, "n_calls"),
                "cold_start_ms": _median_n(cold, "n_trials"),
                "by_tool": _by_tool(table, mine, calls["tool"]),
                "transport_failures": int(failures.sum()),
                "trials_with_transport_failures": int((failures > 0).sum()),
                "transport_failure_kinds": dict(sorted(kinds.items())),
                "infra_attempts_with_transport_failures": int((infra_failures > 0).sum()),
                "infra_transport_failures": int(infra_failures.sum()),
            }
        )
    return out


def _request_spread(values: npt.NDArray[np.float64]) -> dict[str, Any]:
    values = values[~np.isnan(values)]
    if not len(values):
        return {"n": 0, "median": None, "p10": None, "p90": None}
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return {"n": len(values), "median": float(median), "p10": float(p10), "p90": float(p90)}


def model_requests(frame: Frame) -> list[dict[str, Any]]:
    """Per arm in declared order; empty when no record of the run has model requests."""
    req = frame.table.requests
    if not len(req["row"]):
        return []
    ran = frame.final[~frame.mask("not_run")[frame.final]]
    out = []
    for i, arm in enumerate(frame.arms):
        rows = frame.of_arm(ran, i)
        mine = np.isin(req["row"], rows)
        out.append(
            {
                "arm": arm,
                "trials": len(rows),
                "trials_with_requests": len(np.unique(req["row"][mine])),
                "requests": int(mine.sum()),
                "failed": int((~req["ok"][mine]).sum()),
                **{q: _request_spread(req[q][mine]) for q in REQUEST_NUMBERS},
            }
        )
    return out


def security(frame: Frame) -> list[dict[str, Any]]:
    """Per arm: injection compliance over applicable trials; declared secrets and, apart,
    token-shaped strings found in output."""
    cols = frame.table.columns
    probed = frame.scored[cols["security"][frame.scored]]
    out = []
    for i, arm in enumerate(frame.arms):
        rows = frame.of_arm(probed, i)
        injection = cols["injection"][rows]
        applicable = injection >= 0
        token = cols["token"][rows]
        out.append(
            {
                "arm": arm,
                "prompt_injection_compliance": proportion(
                    int((injection == 1).sum()), int(applicable.sum())
                ),
                "injection_applicable": bool(applicable.any()),
                "secret_in_output": proportion(int(cols["secret"][rows].sum()), len(rows)),
                "token_shaped_in_output": proportion(
                    int((token == 1).sum()), int((token >= 0).sum())
                ),
            }
        )
    return out


COST_METRICS = (
    "input_tokens",
    "uncached_input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
    "total_tokens",
    "cost_usd",
    "turns",
)
"""Summarised per arm by provenance: model usage, cost and the agent's turns."""


PREDATES = "not recorded: the record predates this metric"


def _provenanced(
    frame: Frame, name: str, rows: npt.NDArray[np.int64], notes: str
) -> dict[str, Any]:
    """Metric ``name``'s measured (or estimated) values at ``rows``: their count, correctly
    rounded total (fsum: the same whatever order the records were committed in; journal rows
    come in completion order, result files in path order), median, and under ``notes`` how
    they were measured (or estimated), sorted."""
    values = frame.table.columns[name][rows]
    cats = frame.table.categories[f"{name}_note"]
    codes = np.unique(frame.table.columns[f"{name}_note"][rows])
    return {
        "n": len(values),
        "total": math.fsum(values.tolist()) if len(values) else None,
        "median": median_or_none(values),
        notes: sorted({cats[c] for c in codes.tolist() if c >= 0}),
    }


def _cost_metric(frame: Frame, rows: npt.NDArray[np.int64], name: str) -> dict[str, Any]:
    table = frame.table
    value = table.columns[name][rows]
    prov = table.columns[f"{name}_prov"][rows]
    has = ~np.isnan(value)
    measured = has & (prov == table.code_of(f"{name}_prov", "measured"))
    estimated = has & (prov == table.code_of(f"{name}_prov", "estimated"))
    missing = rows[~measured & ~estimated]
    absent = table.columns[f"{name}_prov"][missing] < 0
    had_metrics = table.columns["metrics"][missing]
    cats = table.categories[f"{name}_note"]
    codes, counts = np.unique(table.columns[f"{name}_note"][missing], return_counts=True)
    reasons = Counter(
        {cats[c]: n for c, n in zip(codes.tolist(), counts.tolist(), strict=True) if c >= 0}
    )
    reasons["no metrics recorded"] += int((absent & ~had_metrics).sum())
    # A row with metrics but no value for this one was written before the metric existed.
    reasons[PREDATES] += int((absent & had_metrics).sum())
    # Measured and estimated values are kept apart: their sum would be neither.
    return {
        "measured": _provenanced(frame, name, rows[measured], "sources"),
        "estimated": _provenanced(frame, name, rows[estimated], "estimators"),
        "missing": {"n": len(missing), "reasons": dict(sorted((+reasons).items()))},
    }


def cost(frame: Frame) -> list[dict[str, Any]]:
    """Per arm: tokens (all input, its cache split, output, total), cost and turns, split by
    provenance."""
    return [
        {
            "arm": arm,
            **{
                name: _cost_metric(frame, frame.of_arm(frame.scored, i), name)
                for name in COST_METRICS
            },
        }
        for i, arm in enumerate(frame.arms)
    ]
