"""A record as one flat row of the trial table: what the journal stores per attempt.

Pure Python (no numpy) because the runner builds a row for every attempt it commits.
"""

from __future__ import annotations

import json
import math
import statistics
from typing import Any

from pairbench.store._events import RequestRow, TrialRow
from pairbench.store._records import ModelRequest, TrialResult

ATTENTION = frozenset({"not_run", "infra", "interrupted", "agent_error"})
"""Outcomes whose final answer the row keeps (an excerpt): the report lists them."""
ANSWER_EXCERPT = 300
METRIC_COLUMNS = (
    "wall_ms",
    "agent_ms",
    "turns",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "cold_start_ms",
    "uncached_input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "total_tokens",
)


def _excerpt(answer: str | None) -> str | None:
    if answer is not None and len(answer) > ANSWER_EXCERPT:
        return answer[:ANSWER_EXCERPT] + "…"
    return answer


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _or_none(value: float | None) -> float | None:
    """A timing as stored: a non-finite one is no timing (None), never NaN in JSON."""
    return value if _finite(value) else None


def _tri(value: bool | None) -> int:
    return -1 if value is None else int(value)


def _fields(result: TrialResult) -> str | None:
    """The grade's per-field verdicts as sorted JSON text, or None when it scored no fields.

    Any grader may score fields: ``details.fields`` a list of objects with ``path`` (or
    ``name``) and a boolean ``correct``. Anything else there is not a field score and is
    left out, so a grader's free-form details never break the table.
    """
    details = result.grade.details if result.grade is not None else None
    items = details.get("fields") if isinstance(details, dict) else None
    if not isinstance(items, list):
        return None
    verdicts: dict[str, bool] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        name = item.get("path", item.get("name"))
        if isinstance(name, str) and isinstance(item.get("correct"), bool):
            verdicts[name] = item["correct"]
    return json.dumps(verdicts, sort_keys=True) if verdicts else None


DIGEST_HEX = 16
"""Hex digits of a request's and a reply's SHA-256 the table keeps: 64 bits, one int64."""


def _request_row(r: ModelRequest) -> RequestRow:
    return RequestRow(
        ok=r.ok,
        prompt_tokens=r.prompt_tokens,
        completion_tokens=r.completion_tokens,
        latency_ms=_or_none(r.latency_ms),
        first_token_ms=_or_none(r.first_token_ms),
        prompt_per_second=_or_none(r.prompt_per_second),
        generation_per_second=_or_none(r.generation_per_second),
        body=r.body_sha256[:DIGEST_HEX] if r.body_sha256 else None,
        reply=r.reply_sha256[:DIGEST_HEX] if r.reply_sha256 else None,
    )


def trial_row(result: TrialResult, *, kept: bool) -> TrialRow:
    """One record as the flat row the journal stores and the table is built from."""
    m, sec, seeding = result.metrics, result.security, result.seeding
    row: dict[str, Any] = {
        "arm": result.arm,
        "task": result.task,
        "trial": result.trial,
        "attempt": result.attempt,
        "kept": kept,
        "outcome": result.outcome,
        "start_order": result.start_order,
        "simulated": result.simulated,
        "reason": result.reason,
        "answer": _excerpt(result.final_answer) if result.outcome in ATTENTION else None,
        "labels": json.dumps(result.labels, sort_keys=True),
        "valid": _tri(result.validity.valid if result.validity else None),
        "security": sec is not None,
        "injection": _tri(sec.prompt_injection_compliance if sec else None),
        "secret": bool(sec and sec.secret_in_output),
        "token": _tri(sec.token_shaped_in_output if sec else None),
        "seeding": seeding.status if seeding else None,
        "seeding_reason": seeding.reason if seeding and seeding.reason else None,
        "mounted_proof": result.mounted_proof.status if result.mounted_proof else None,
        "mounted_coverage": result.mounted_proof.coverage if result.mounted_proof else None,
        "metrics": m is not None,
        "models": json.dumps(result.models_seen) if result.models_seen else None,
        "fields": _fields(result),
        "calls": [],
    }
    for name in METRIC_COLUMNS:
        metric = getattr(m, name) if m is not None else None
        value = metric.value if metric is not None else None
        note = None
        if value is not None and not math.isfinite(value):
            # NaN or infinity is no measurement: missing, and the reason says what was there.
            who = metric.source or metric.estimator if metric is not None else None
            row[name], row[f"{name}_prov"] = None, "missing"
            row[f"{name}_note"] = f"a non-finite value ({value}) was recorded" + (
                f" by {who}" if who else ""
            )
            continue
        if metric is not None and value is not None and metric.provenance == "measured":
            note = metric.source or "unnamed source"
        elif metric is not None and value is not None and metric.provenance == "estimated":
            note = metric.estimator or "unnamed estimator"
        elif metric is not None:
            note = metric.reason or "no reason given"
        row[name] = value
        row[f"{name}_prov"] = metric.provenance if metric is not None else None
        row[f"{name}_note"] = note
    timed = [_or_none(c.client_ms) for c in m.tool_calls] if m else []
    client = [ms for ms in timed if ms is not None]
    row["tool_client_ms"] = statistics.median(client) if client else None
    parts = (
        [_or_none(c.value) if c.provenance == "measured" else None for c in m.connect_ms.values()]
        if m
        else []
    )
    # A trial's connect time is the sum over its servers; none if any part is not measured.
    whole = bool(parts) and all(p is not None for p in parts)
    row["connect_ms"] = math.fsum(p for p in parts if p is not None) if whole else None
    row["transport_failures"] = m.transport_failures if m else 0
    row["workspace_dropped_files"] = result.workspace.dropped_files if result.workspace else 0
    row["failure_kinds"] = (
        json.dumps(m.transport_failure_kinds) if m and m.transport_failure_kinds else None
    )
    row["calls"] = (
        [(_or_none(c.client_ms), _or_none(c.server_ms)) for c in m.tool_calls] if m else []
    )
    # A record from before per-tool metrics (no ``cold_start_ms_by_tool``) gives no tool
    # names either: its row is then the one its journal holds, which ``verify`` compares.
    per_tool = m.cold_start_ms_by_tool if m else {}
    row["call_tools"] = [m.tool_key(c) for c in m.tool_calls] if m and per_tool else []
    row["tool_cold_starts"] = [
        (tool, _or_none(cold.value) if cold.provenance == "measured" else None)
        for tool, cold in per_tool.items()
    ]
    row["requests"] = [_request_row(r) for r in m.model_requests] if m else []
    # Validated, not model_construct: for a model this wide pydantic's construct (Python,
    # a loop over ~50 fields) costs ~15 us, validation (its Rust core) ~6 us.
    return TrialRow.model_validate(row)
