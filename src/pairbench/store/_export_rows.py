"""A run as one flat row per attempt: the columns every export (CSV, JSONL, Parquet, a
pandas DataFrame) shares.

Rows are every final record (``results/``, and a ``not_run`` row, attempt 0, for each
planned trial without one) and every kept attempt (``infra/``, ``interrupted/``), read
with :func:`~pairbench.store._load_run.load_run`: the records themselves, not the trial
table, since only they hold seeds, grade details and each metric's source. Nothing in
the run is written.

**Columns**, in this order (:data:`FIXED` names the fixed ones; a name with a dot is one
of a run's own keys, flattened, so it never collides with a fixed name):

- ``run_id``, ``experiment`` (the experiment or study id), ``arm``, ``task``, ``label.<key>``
  (one per task label), ``trial``, ``attempt`` (1 first, 2 the retry after an infra
  failure, 0 for a planned trial that never ran), ``final`` (true: the trial's result;
  false: a kept infra or interrupted attempt), ``seed``, ``model_seed``, ``start_order``,
  ``agent``, ``simulated``, ``started_at``, ``ended_at``;
- ``outcome``, ``reason``, ``valid`` (null: no validity record), ``off_surface``,
  ``grade_outcome``, ``grade_reason``, ``grade.<key>`` (the grader's details, nested keys
  joined by dots; a list as JSON text);
- per metric (:data:`METRICS`): ``<metric>`` (the value; null when missing, never 0),
  ``<metric>_provenance`` (``measured``, ``estimated`` or ``missing``), ``<metric>_source``
  (measured: whose accounting; estimated: the estimator) and ``<metric>_reason``
  (missing: why);
- ``tool_calls``, ``tool_call_errors``, ``transport_failures``, ``transport_failure_kinds``;
- ``security`` (probes recorded), ``prompt_injection_compliance``, ``injection_seen``,
  ``secret_in_output``, ``secret_locations``, ``token_shaped_in_output``, ``token_shaped``;
- ``seeding``, ``seeding_requests``, ``seeding_requests_with_seed``, ``seeding_reason``,
  ``models_seen``, ``final_answer``, ``transcript_sha256``.

A list is JSON text (``["connect"]``, ``[]``), null only when the record that would hold
it is absent (no validity record, say). A record without metrics (``not_run``) has every
metric missing with its reason, and null counts. Rows are sorted by arm and task in
declared order, then trial, then attempt, so one run always exports the same rows.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pairbench.store._load_run import load_run
from pairbench.store._records import Metric, Metrics, TrialResult
from pairbench.store._row import METRIC_COLUMNS

Cell = str | int | float | bool | None
"""One value of a row."""
Kind = Literal["str", "int", "uint", "float", "bool"]
"""A column's type, the same in every format (CSV text, JSON, Parquet, pandas): ``int`` is
64-bit signed, ``uint`` 64-bit unsigned (a trial seed is any 64-bit number)."""
_INT64 = range(-(2**63), 2**63)

Record = tuple[TrialResult, bool]
"""A record and whether it is its trial's final one."""

METRICS: tuple[str, ...] = (*METRIC_COLUMNS, "connect_ms", "tool_client_ms")
"""Every metric exported with its provenance: the record's metrics, then the two the trial
table derives (``connect_ms``: the sum over the attempt's MCP servers; ``tool_client_ms``:
the median client latency of its timed tool calls)."""
METRIC_PARTS = ("provenance", "source", "reason")

_HEAD: tuple[tuple[str, Kind], ...] = (
    ("run_id", "str"),
    ("experiment", "str"),
    ("arm", "str"),
    ("task", "str"),
)
_IDENTITY: tuple[tuple[str, Kind], ...] = (
    ("trial", "int"),
    ("attempt", "int"),
    ("final", "bool"),
    ("seed", "uint"),
    ("model_seed", "int"),
    ("start_order", "int"),
    ("agent", "str"),
    ("simulated", "bool"),
    ("started_at", "str"),
    ("ended_at", "str"),
)
_OUTCOME: tuple[tuple[str, Kind], ...] = (
    ("outcome", "str"),
    ("reason", "str"),
    ("valid", "bool"),
    ("off_surface", "str"),
    ("grade_outcome", "str"),
    ("grade_reason", "str"),
)
_FLOAT: Kind = "float"
_STR: Kind = "str"
_METRIC_KINDS: tuple[tuple[str, Kind], ...] = tuple(
    column
    for metric in METRICS
    for column in ((metric, _FLOAT), *((f"{metric}_{part}", _STR) for part in METRIC_PARTS))
)
_TAIL: tuple[tuple[str, Kind], ...] = (
    ("tool_calls", "int"),
    ("tool_call_errors", "int"),
    ("transport_failures", "int"),
    ("transport_failure_kinds", "str"),
    ("security", "bool"),
    ("prompt_injection_compliance", "bool"),
    ("injection_seen", "bool"),
    ("secret_in_output", "bool"),
    ("secret_locations", "str"),
    ("token_shaped_in_output", "bool"),
    ("token_shaped", "str"),
    ("seeding", "str"),
    ("seeding_requests", "int"),
    ("seeding_requests_with_seed", "int"),
    ("seeding_reason", "str"),
    ("models_seen", "str"),
    ("final_answer", "str"),
    ("transcript_sha256", "str"),
)
FIXED: dict[str, Kind] = dict((*_HEAD, *_IDENTITY, *_OUTCOME, *_METRIC_KINDS, *_TAIL))
"""Every fixed column and its kind (the ``label.*`` and ``grade.*`` columns are a run's own)."""


@dataclass(frozen=True)
class ExportTable:
    """A run's attempts as rows of cells, with each column's kind.

    **Usage**::

        table = export_table(Path("runs/mcp-transports-20261129T150000Z-1a2b3c"))
        table.columns[:4]     # ('run_id', 'experiment', 'arm', 'task')
        table.column("outcome")  # one cell per row
    """

    run_id: str
    journal_head: str
    """The hash of the journal's last line when the records were read: the run's state."""
    columns: tuple[str, ...]
    kinds: Mapping[str, Kind]
    rows: tuple[tuple[Cell, ...], ...]

    def column(self, name: str) -> list[Cell]:
        """One column's cells, in row order."""
        i = self.columns.index(name)
        return [row[i] for row in self.rows]


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _metric_cells(name: str, metric: Metric) -> dict[str, Cell]:
    """A metric as its four cells; a non-finite value is no measurement (missing)."""
    value, source, reason = metric.value, None, None
    provenance: str = metric.provenance
    if value is not None and not math.isfinite(value):
        who = metric.source or metric.estimator
        value, provenance = None, "missing"
        reason = f"a non-finite value ({metric.value}) was recorded" + (f" by {who}" if who else "")
    elif value is None or provenance == "missing":
        value, provenance = None, "missing"
        reason = metric.reason or "no reason given"
    elif provenance == "measured":
        source = metric.source or "unnamed source"
    else:
        source = metric.estimator or "unnamed estimator"
    return {
        name: value,
        f"{name}_provenance": provenance,
        f"{name}_source": source,
        f"{name}_reason": reason,
    }


def _connect(m: Metrics) -> Metric:
    """The attempt's connect time: the sum over its MCP servers, as the trial table has it
    (measured only when every server's is)."""
    if not m.connect_ms:
        return Metric.missing("no MCP server connected")
    for server, part in sorted(m.connect_ms.items()):
        if part.value is None or part.provenance != "measured" or not math.isfinite(part.value):
            why = part.reason or f"{part.provenance}, not measured"
            return Metric.missing(f"server {server}: {why}")
    sources = sorted({part.source or "unnamed source" for part in m.connect_ms.values()})
    total = math.fsum(part.value or 0.0 for part in m.connect_ms.values())
    return Metric.measured(total, f"sum over {len(m.connect_ms)} server(s): {'; '.join(sources)}")


def _tool_client(m: Metrics) -> Metric:
    timed = [c.client_ms for c in m.tool_calls if c.client_ms is not None]
    timed = [ms for ms in timed if math.isfinite(ms)]
    if not timed:
        return Metric.missing("no timed tool call")
    return Metric.measured(
        statistics.median(timed), f"median of {len(timed)} timed tool call(s), client side"
    )


def _metrics(result: TrialResult) -> dict[str, Cell]:
    m = result.metrics
    cells: dict[str, Cell] = {}
    if m is None:
        absent = Metric.missing(f"the attempt recorded no metrics (outcome {result.outcome})")
        for name in METRICS:
            cells |= _metric_cells(name, absent)
        return cells | dict.fromkeys(
            ("tool_calls", "tool_call_errors", "transport_failures", "transport_failure_kinds")
        )
    for name in METRIC_COLUMNS:
        cells |= _metric_cells(name, getattr(m, name))
    cells |= _metric_cells("connect_ms", _connect(m))
    cells |= _metric_cells("tool_client_ms", _tool_client(m))
    return cells | {
        "tool_calls": len(m.tool_calls),
        "tool_call_errors": sum(c.is_error for c in m.tool_calls),
        "transport_failures": m.transport_failures,
        "transport_failure_kinds": _json(m.transport_failure_kinds),
    }


def _flatten(prefix: str, value: Mapping[str, Any], out: dict[str, Any]) -> None:
    """``{"a": {"b": 1}, "c": [1]}`` as ``{prefix.a.b: 1, prefix.c: "[1]"}``."""
    for key, item in value.items():
        name = f"{prefix}.{key}"
        if isinstance(item, Mapping) and item:
            _flatten(name, item, out)
        elif isinstance(item, str | int | float | bool) or item is None:
            out[name] = item
        else:
            out[name] = _json(item)


def _row(result: TrialResult, final: bool) -> dict[str, Any]:
    grade, valid, sec, seeding = result.grade, result.validity, result.security, result.seeding
    row: dict[str, Any] = {
        "run_id": result.run_id,
        "experiment": result.experiment,
        "arm": result.arm,
        "task": result.task,
        "trial": result.trial,
        "attempt": result.attempt,
        "final": final,
        "seed": result.seed,
        "model_seed": result.model_seed,
        "start_order": result.start_order,
        "agent": result.agent or None,
        "simulated": result.simulated,
        "started_at": result.started_at,
        "ended_at": result.ended_at,
        "outcome": result.outcome,
        "reason": result.reason or None,
        "valid": valid.valid if valid else None,
        "off_surface": _json(valid.off_surface) if valid else None,
        "grade_outcome": grade.outcome if grade else None,
        "grade_reason": (grade.reason or None) if grade else None,
        **_metrics(result),
        "security": sec is not None,
        "prompt_injection_compliance": sec.prompt_injection_compliance if sec else None,
        "injection_seen": sec.injection_seen if sec else None,
        "secret_in_output": sec.secret_in_output if sec else None,
        "secret_locations": _json(sec.secret_locations) if sec else None,
        "token_shaped_in_output": sec.token_shaped_in_output if sec else None,
        "token_shaped": _json(sec.token_shaped) if sec else None,
        "seeding": seeding.status if seeding else None,
        "seeding_requests": seeding.requests if seeding else None,
        "seeding_requests_with_seed": seeding.requests_with_seed if seeding else None,
        "seeding_reason": (seeding.reason or None) if seeding else None,
        "models_seen": _json(result.models_seen),
        "final_answer": result.final_answer,
        "transcript_sha256": result.transcript_sha256,
    }
    _flatten("label", result.labels, row)
    if grade is not None:
        _flatten("grade", grade.details, row)
    return row


def _kind(values: Iterable[Any]) -> Kind:
    """The one kind a run's own column's values share; mixed values are text."""
    present = [v for v in values if v is not None]
    kinds = {type(v) for v in present}
    if kinds and kinds <= {bool}:
        return "bool"
    if kinds and kinds <= {int}:
        return "int" if all(v in _INT64 for v in present) else "str"
    if kinds and kinds <= {int, float}:
        return "float"
    return "str"


def _cell(value: Any, kind: Kind) -> Cell:
    if value is None:
        return None
    if kind == "float":
        number = float(value)
        return number if math.isfinite(number) else None  # NaN is no value, in any format
    if kind == "str" and not isinstance(value, str):
        return _json(value)
    cell: Cell = value
    return cell


def _order(arms: list[str], tasks: list[str]) -> Callable[[Record], tuple[Any, ...]]:
    """Arm and task in declared order (others after, by name), then trial and attempt."""
    arm_rank = {a: i for i, a in enumerate(arms)}
    task_rank = {t: i for i, t in enumerate(tasks)}

    def key(item: Record) -> tuple[Any, ...]:
        r, final = item
        return (
            arm_rank.get(r.arm, len(arm_rank)),
            r.arm,
            task_rank.get(r.task, len(task_rank)),
            r.task,
            r.trial,
            r.attempt,
            final,
        )

    return key


def export_table(run: Path) -> ExportTable:
    """Every attempt of a run as rows (see the module docstring for the columns).

    Raises ``RunDirError`` naming the first file that cannot be read.
    """
    loaded = load_run(run)
    records: list[Record] = [(r, True) for r in loaded.results]
    records += [(r, False) for r in (*loaded.infra, *loaded.interrupted)]
    records.sort(key=_order(loaded.info.arms, [t.id for t in loaded.info.tasks]))
    dicts = [_row(r, final) for r, final in records]
    own = sorted({k for d in dicts for k in d if k not in FIXED})
    labels = [k for k in own if k.startswith("label.")]
    grades = [k for k in own if k.startswith("grade.")]
    columns = (
        *(name for name, _ in _HEAD),
        *labels,
        *(name for name, _ in _IDENTITY),
        *(name for name, _ in _OUTCOME),
        *grades,
        *(name for name, _ in (*_METRIC_KINDS, *_TAIL)),
    )
    kinds: dict[str, Kind] = {
        name: FIXED[name] if name in FIXED else _kind(d.get(name) for d in dicts)
        for name in columns
    }
    rows = tuple(tuple(_cell(d.get(name), kinds[name]) for name in columns) for d in dicts)
    return ExportTable(
        run_id=loaded.info.run_id,
        journal_head=loaded.run_dir.journal_head(),
        columns=columns,
        kinds=kinds,
        rows=rows,
    )
