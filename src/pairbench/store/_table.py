"""The trial table: every stored record of a run as numpy columns, for analysis at scale.

One row per record: each trial's final result (``kept`` false) and each attempt kept beside
it (``infra/``, ``interrupted/``: ``kept`` true). Its source of truth is the journal: the
runner writes each record's row (:func:`trial_row`) into the ``attempt_finished`` event
that commits it, so the table is exactly as durable as the journal. :func:`load_table`
compacts those rows into ``trials.npz`` (fixed columns, strings dictionary-encoded) and
reuses it while the journal has not grown, so a report of a million trials reads a few
arrays instead of a million JSON files.

Strings are stored as codes into a list of categories (``-1``: none). A metric's value is
``NaN`` when it has none — never 0 — and its provenance and note (source when measured,
estimator when estimated, reason otherwise) sit in columns beside it.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from pairbench.store._events import TrialRow
from pairbench.store._records import TrialResult
from pairbench.store._row import METRIC_COLUMNS, trial_row

TABLE_SCHEMA = "pairbench.trials/1"
_CAT = (
    "arm",
    "task",
    "outcome",
    "reason",
    "answer",
    "labels",
    "seeding",
    "seeding_reason",
    "mounted_proof",
    "mounted_coverage",
    "failure_kinds",
    "models",
    "fields",
    *(f"{m}_{part}" for m in METRIC_COLUMNS for part in ("prov", "note")),
)
_INT = {"trial": np.int32, "attempt": np.int32, "start_order": np.int16}
_TRI = ("valid", "injection", "token")
"""Optional booleans: 1 true, 0 false, -1 not recorded."""
_BOOL = ("kept", "simulated", "security", "secret", "metrics")
_FLOAT = (*METRIC_COLUMNS, "tool_client_ms", "connect_ms")
_COUNT = ("transport_failures", "workspace_dropped_files")
_CALLS = ("row", "client_ms", "server_ms", "tool", "cold_start_ms")
CALL_TOOL = "call_tool"
"""The categories of ``calls["tool"]``: the tools' ``server.tool`` names."""
REQUEST_NUMBERS = (
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "first_token_ms",
    "prompt_per_second",
    "generation_per_second",
)
_REQ_DIGEST = ("body", "reply")
_REQUESTS = ("row", "ok", *REQUEST_NUMBERS, *_REQ_DIGEST)
"""The model requests' columns: ``row``, ``ok``, numbers (NaN: not recorded) and the two
digests (the first 64 bits of each SHA-256 as an int64; 0: not recorded)."""

Floats = npt.NDArray[np.float64]


def _add_absent_columns(
    columns: dict[str, npt.NDArray[Any]], categories: dict[str, list[str]]
) -> None:
    """Give a table written before a column existed that column, every value absent.

    Absent means what a row without the field gets in :meth:`TrialTable.from_rows`: no
    category (-1), NaN for a number (a metric not recorded is missing, never 0), -1 for an
    optional boolean, false, or a count of 0.
    """
    n = len(columns["trial"])
    for name in _CAT:
        if name not in columns:
            columns[name] = np.full(n, -1, dtype=np.int32)
            categories[name] = []
    for name in _TRI:
        columns.setdefault(name, np.full(n, -1, dtype=np.int8))
    for name in _BOOL:
        columns.setdefault(name, np.zeros(n, dtype=np.bool_))
    for name in _FLOAT:
        columns.setdefault(name, np.full(n, np.nan, dtype=np.float64))
    for name in _COUNT:
        columns.setdefault(name, np.zeros(n, dtype=np.int32))


def _add_absent_call_columns(
    calls: dict[str, npt.NDArray[Any]], categories: dict[str, list[str]]
) -> None:
    """Give the calls of a table written before per-tool metrics their tool (none) and
    cold start (NaN) columns."""
    if "row" not in calls:
        return  # not a table: named by the shape check
    n = len(calls["row"])
    if "tool" not in calls:
        calls["tool"] = np.full(n, -1, dtype=np.int32)
        categories[CALL_TOOL] = []
    calls.setdefault("cold_start_ms", np.full(n, np.nan, dtype=np.float64))


def _no_requests() -> dict[str, npt.NDArray[Any]]:
    """The requests of a table written before they were kept: none."""
    out: dict[str, npt.NDArray[Any]] = {"row": np.zeros(0, np.int64), "ok": np.zeros(0, np.bool_)}
    out |= {k: np.zeros(0, np.float64) for k in REQUEST_NUMBERS}
    return out | {k: np.zeros(0, np.int64) for k in _REQ_DIGEST}


def _digest(hex_prefix: str | None) -> int:
    """A digest's first 64 bits as a signed int64 (0: none)."""
    if not hex_prefix:
        return 0
    value = int(hex_prefix, 16)
    return value - (1 << 64) if value >= 1 << 63 else value


def _check_requests(requests: Mapping[str, npt.NDArray[Any]], n: int) -> None:
    kinds = {"row": "i", "ok": "b"} | dict.fromkeys(REQUEST_NUMBERS, "f")
    kinds |= dict.fromkeys(_REQ_DIGEST, "i")
    lengths = {len(requests.get(k, ())) for k in _REQUESTS}
    if len(lengths) != 1 or any(
        requests[k].ndim != 1 or requests[k].dtype.kind != kind for k, kind in kinds.items()
    ):
        raise ValueError(f"the model requests are not {len(_REQUESTS)} columns of one length")
    rows = requests["row"]
    if len(rows) and not 0 <= int(rows.min()) <= int(rows.max()) < n:
        raise ValueError("a model request belongs to no row")


def _check_shape(
    columns: Mapping[str, npt.NDArray[Any]],
    categories: Mapping[str, Any],
    calls: Mapping[str, npt.NDArray[Any]],
) -> None:
    """Raise ``ValueError`` unless the arrays are a table :meth:`TrialTable.to_bytes` could
    have written: every column 1-D, as long as the others, of its kind, codes in range."""
    n = len(columns["trial"])
    kinds = {name: "i" for name in (*_CAT, *_INT, *_TRI, *_COUNT)}
    kinds |= {name: "b" for name in _BOOL} | {name: "f" for name in _FLOAT}
    for name, kind in kinds.items():
        column = columns[name]
        if column.ndim != 1 or len(column) != n or column.dtype.kind != kind:
            raise ValueError(f"column {name!r} is not {n} values of kind {kind!r}")
    for name in _CAT:
        cats = categories.get(name)
        if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
            raise ValueError(f"the categories of {name!r} are not a list of strings")
        if n and not -1 <= int(columns[name].min()) <= int(columns[name].max()) < len(cats):
            raise ValueError(f"column {name!r} has a code outside its categories")
    lengths = {len(calls.get(k, ())) for k in _CALLS}
    rows, tools = calls.get("row"), calls.get("tool")
    if rows is None or tools is None or len(lengths) != 1 or rows.dtype.kind != "i":
        raise ValueError(f"the tool calls are not {len(_CALLS)} columns of one length")
    if len(rows) and not 0 <= int(rows.min()) <= int(rows.max()) < n:
        raise ValueError("a tool call belongs to no row")
    names = categories.get(CALL_TOOL)
    if not isinstance(names, list) or not all(isinstance(c, str) for c in names):
        raise ValueError("the categories of the calls' tools are not a list of strings")
    if tools.dtype.kind != "i" or (
        len(tools) and not -1 <= int(tools.min()) <= int(tools.max()) < len(names)
    ):
        raise ValueError("a tool call's tool is outside its categories")


@dataclass(frozen=True)
class TrialTable:
    """Columns of equal length (``len(table)`` rows), the flattened tool calls and the
    flattened model requests.

    ``codes[name]`` holds category indices (``-1``: none) into ``categories[name]``;
    ``calls`` holds ``row`` (index of the record), ``client_ms``, ``server_ms``, ``tool``
    (a code into ``categories["call_tool"]``; -1 in a row without per-tool metrics) and
    ``cold_start_ms``: on the first call of each tool in a row, that tool's cold start in
    that trial as the record holds it (NaN on every other call, and when missing).
    ``requests`` holds each model API request of a row, in order: ``row``, ``ok``,
    ``prompt_tokens``, ``completion_tokens``, ``latency_ms``, ``first_token_ms``,
    ``prompt_per_second``, ``generation_per_second`` (NaN: not recorded) and the ``body``
    and ``reply`` digests (int64; 0: not recorded).
    """

    columns: Mapping[str, npt.NDArray[Any]]
    categories: Mapping[str, list[str]]
    calls: Mapping[str, npt.NDArray[Any]]
    requests: Mapping[str, npt.NDArray[Any]] = field(default_factory=_no_requests)

    def __len__(self) -> int:
        return len(self.columns["trial"])

    def strings(self, name: str) -> list[str | None]:
        """A categorical column decoded, one string (or None) per row: for small tables."""
        cats = self.categories[name]
        return [None if c < 0 else cats[c] for c in self.columns[name].tolist()]

    def code_of(self, name: str, value: str) -> int:
        """The code of ``value`` in column ``name`` (-2, matching nothing, when absent)."""
        try:
            return self.categories[name].index(value)
        except ValueError:
            return -2

    def is_value(self, name: str, value: str) -> npt.NDArray[np.bool_]:
        return np.asarray(self.columns[name] == self.code_of(name, value))

    # -- building ------------------------------------------------------------------------
    @classmethod
    def from_rows(cls, rows: Iterable[TrialRow]) -> TrialTable:
        """Build from :func:`trial_row` rows (in this order).

        Raises ``ValueError`` for a row whose value does not fit its column (a trial
        number past the column's range).
        """
        try:
            return cls._from_rows(list(rows))
        except (TypeError, IndexError, OverflowError) as exc:
            raise ValueError(str(exc)) from exc

    @classmethod
    def _from_rows(cls, rows: list[TrialRow]) -> TrialTable:
        columns: dict[str, npt.NDArray[Any]] = {}
        categories: dict[str, list[str]] = {}
        for name in _CAT:
            index: dict[str, int] = {}
            codes = [
                -1 if (v := getattr(r, name)) is None else index.setdefault(v, len(index))
                for r in rows
            ]
            columns[name] = np.array(codes, dtype=np.int32)
            categories[name] = list(index)
        for name, dtype in _INT.items():
            columns[name] = np.array([getattr(r, name) for r in rows], dtype=dtype)
        for name in _TRI:
            columns[name] = np.array([getattr(r, name) for r in rows], dtype=np.int8)
        for name in _BOOL:
            columns[name] = np.array([getattr(r, name) for r in rows], dtype=np.bool_)
        for name in _FLOAT:
            values = [getattr(r, name) for r in rows]
            columns[name] = np.array(
                [math.nan if v is None else v for v in values], dtype=np.float64
            )
        for name in _COUNT:
            columns[name] = np.array([getattr(r, name) for r in rows], dtype=np.int32)
        owner = [i for i, r in enumerate(rows) for _ in r.calls]
        pairs = [c for r in rows for c in r.calls]
        tools: dict[str, int] = {}
        tool_codes: list[int] = []
        colds: list[float] = []
        for r in rows:
            # A row without tool names (from before per-tool metrics) gives none to any call.
            named: list[str | None] = list(r.call_tools)
            if len(named) != len(r.calls):
                named = [None] * len(r.calls)
            cold = dict(r.tool_cold_starts)
            for tool in named:
                tool_codes.append(-1 if tool is None else tools.setdefault(tool, len(tools)))
                value = None if tool is None else cold.pop(tool, None)  # on its first call
                colds.append(math.nan if value is None else value)
        categories[CALL_TOOL] = list(tools)
        calls: dict[str, npt.NDArray[Any]] = {
            "row": np.array(owner, dtype=np.int64),
            "client_ms": np.array(
                [math.nan if c[0] is None else c[0] for c in pairs], dtype=np.float64
            ),
            "server_ms": np.array(
                [math.nan if c[1] is None else c[1] for c in pairs], dtype=np.float64
            ),
            "tool": np.array(tool_codes, dtype=np.int32),
            "cold_start_ms": np.array(colds, dtype=np.float64),
        }
        return cls(columns, categories, calls, cls._requests_of(rows))

    @staticmethod
    def _requests_of(rows: list[TrialRow]) -> dict[str, npt.NDArray[Any]]:
        flat = [(i, q) for i, r in enumerate(rows) for q in r.requests]
        out: dict[str, npt.NDArray[Any]] = {
            "row": np.array([i for i, _ in flat], dtype=np.int64),
            "ok": np.array([q.ok for _, q in flat], dtype=np.bool_),
        }
        for name in REQUEST_NUMBERS:
            values = [getattr(q, name) for _, q in flat]
            out[name] = np.array([math.nan if v is None else v for v in values], np.float64)
        for name in _REQ_DIGEST:
            out[name] = np.array([_digest(getattr(q, name)) for _, q in flat], dtype=np.int64)
        return out

    @classmethod
    def from_results(
        cls, results: Sequence[TrialResult], kept: Sequence[TrialResult] = ()
    ) -> TrialTable:
        """Final results (then kept attempts) as a table."""
        rows = [trial_row(r, kept=False) for r in results]
        rows += [trial_row(r, kept=True) for r in kept]
        return cls.from_rows(rows)

    # -- storing -------------------------------------------------------------------------
    def to_bytes(self, meta: Mapping[str, Any]) -> bytes:
        """``.npz`` bytes (uncompressed: loading is a read, not a decompression)."""
        header = {"schema_id": TABLE_SCHEMA, "categories": self.categories, **meta}
        arrays: dict[str, Any] = {f"col.{k}": v for k, v in self.columns.items()}
        arrays |= {f"call.{k}": v for k, v in self.calls.items()}
        arrays |= {f"req.{k}": v for k, v in self.requests.items()}
        arrays["meta"] = np.frombuffer(json.dumps(header).encode("utf-8"), np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_npz(cls, data: Any) -> tuple[TrialTable, dict[str, Any]]:
        """Read what :meth:`to_bytes` wrote (an opened ``numpy.load``); returns table and meta.

        Raises ``ValueError`` (or ``KeyError``) for anything :meth:`to_bytes` did not write.
        """
        meta: dict[str, Any] = json.loads(bytes(data["meta"]).decode("utf-8"))
        if not isinstance(meta, dict) or not isinstance(meta.get("categories"), dict):
            raise ValueError(f"not a {TABLE_SCHEMA} table (its meta is not an object)")
        if meta.get("schema_id") != TABLE_SCHEMA:
            raise ValueError(f"not a {TABLE_SCHEMA} table (schema_id {meta.get('schema_id')!r})")
        columns = {k[4:]: data[k] for k in data.files if k.startswith("col.")}
        calls = {k[5:]: data[k] for k in data.files if k.startswith("call.")}
        requests = {k[4:]: data[k] for k in data.files if k.startswith("req.")}
        categories = meta.pop("categories")
        _add_absent_columns(columns, categories)
        _add_absent_call_columns(calls, categories)
        _check_shape(columns, categories, calls)
        requests = requests or _no_requests()
        _check_requests(requests, len(columns["trial"]))
        return cls(columns, categories, calls, requests), meta

    def concat(self, other: TrialTable) -> TrialTable:
        """This table's rows, then ``other``'s (categories merged, codes remapped)."""
        if len(other) == 0:
            return self
        columns: dict[str, npt.NDArray[Any]] = {}
        categories: dict[str, list[str]] = {}
        for name, mine in self.columns.items():
            theirs = other.columns[name]
            if name in _CAT:
                merged = list(self.categories[name])
                index = {v: i for i, v in enumerate(merged)}
                remap = np.array(
                    [index.setdefault(v, len(index)) for v in other.categories[name]] or [0],
                    dtype=np.int32,
                )
                categories[name] = list(index)
                theirs = np.where(theirs < 0, -1, remap[np.maximum(theirs, 0)]).astype(np.int32)
            columns[name] = np.concatenate([mine, theirs])
        calls = {k: np.concatenate([v, other.calls[k]]) for k, v in self.calls.items()}
        calls["row"][len(self.calls["row"]) :] += len(self)
        names = list(self.categories[CALL_TOOL])
        index = {v: i for i, v in enumerate(names)}
        remap = np.array(
            [index.setdefault(v, len(index)) for v in other.categories[CALL_TOOL]] or [0],
            dtype=np.int32,
        )
        categories[CALL_TOOL] = list(index)
        theirs = other.calls["tool"]
        calls["tool"][len(self.calls["tool"]) :] = np.where(
            theirs < 0, -1, remap[np.maximum(theirs, 0)]
        )
        requests = {k: np.concatenate([v, other.requests[k]]) for k, v in self.requests.items()}
        requests["row"][len(self.requests["row"]) :] += len(self)
        return TrialTable(columns, categories, calls, requests)
