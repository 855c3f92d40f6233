"""Exports of a run: its attempts as CSV, JSONL or Parquet bytes, or a pandas DataFrame.

Every format holds the rows and columns of :func:`~._export_rows.export_table` (one row
per attempt, each metric with its provenance). The bytes depend only on the run's
records, so one run exports the same bytes every time. Nothing is written into the run:
``verify`` checks the same files before and after an export.

**Usage**::

    data = export_bytes(Path("runs/mcp-transports-20261129T150000Z-1a2b3c"), "csv")
    write_export(data, Path("trials.csv"), run=run_path)     # refuses an existing file
    frame = load_frame(run_path)                             # pandas, `pairbench[frame]`
"""

from __future__ import annotations

import csv
import importlib
import io
import json
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pairbench._atomic import write_atomic
from pairbench._errors import ExportError
from pairbench.store._export_rows import Cell, ExportTable, export_table

Format = Literal["csv", "jsonl", "parquet", "junit"]
FORMATS: tuple[Format, ...] = ("csv", "jsonl", "parquet", "junit")
EXPORT_SCHEMA = "pairbench.export/1"
"""Named in a Parquet file's metadata; bumped by any change that removes or re-types a
column."""
_FRAME = "pip install 'pairbench[frame]'"
_RECORD_FOLDERS = ("results", "infra", "interrupted", "transcripts")


def optional_module(name: str, what: str) -> ModuleType:
    """Import an optional dependency of the ``frame`` extra, or say how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ExportError(f"{what} needs {name}, which is not installed. Fix: {_FRAME}") from None


def _text(cell: Cell) -> str:
    """A cell as CSV text: empty for null, ``true``/``false``, a float in its shortest
    round-trip form (``repr``), so reading it back gives the same number."""
    if cell is None:
        return ""
    if isinstance(cell, bool):
        return "true" if cell else "false"
    if isinstance(cell, float):
        return repr(cell)
    return str(cell)


def to_csv(table: ExportTable) -> bytes:
    """RFC 4180 CSV (``\\n`` line ends), a header row first; an empty cell is null."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow([_text(cell) for cell in row])
    return buffer.getvalue().encode("utf-8")


def to_jsonl(table: ExportTable) -> bytes:
    """One JSON object per line, every column in every object (null when absent)."""
    lines = [
        json.dumps(dict(zip(table.columns, row, strict=True)), ensure_ascii=False, allow_nan=False)
        for row in table.rows
    ]
    return "".join(line + "\n" for line in lines).encode("utf-8")


def to_parquet(table: ExportTable) -> bytes:
    """A Parquet file, each column typed by its kind, the run named in its metadata."""
    pa: Any = optional_module("pyarrow", "Parquet export")
    pq: Any = optional_module("pyarrow.parquet", "Parquet export")
    types = {
        "str": pa.string(),
        "int": pa.int64(),
        "uint": pa.uint64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
    }
    meta = {"schema_id": EXPORT_SCHEMA, "run_id": table.run_id, "journal_head": table.journal_head}
    schema = pa.schema(
        [pa.field(name, types[table.kinds[name]]) for name in table.columns],
        metadata={"pairbench": json.dumps(meta, sort_keys=True)},
    )
    arrow = pa.table({name: table.column(name) for name in table.columns}, schema=schema)
    sink = io.BytesIO()
    pq.write_table(arrow, sink)
    return sink.getvalue()


def export_bytes(run: Path, fmt: Format) -> bytes:
    """A run exported in ``fmt``: ``csv``, ``jsonl``, ``parquet``, or ``junit`` (its
    declared hypotheses' verdicts, read from ``summary.json``).

    **Usage**::

        Path("trials.jsonl").write_bytes(export_bytes(run_path, "jsonl"))
    """
    if fmt == "junit":
        from pairbench.report.render._junit import junit_xml

        return junit_xml(run)
    writers = {"csv": to_csv, "jsonl": to_jsonl, "parquet": to_parquet}
    return writers[fmt](export_table(run))


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):
        return False


def write_export(data: bytes, out: Path, *, run: Path, force: bool = False) -> None:
    """Write an export to ``out`` atomically; an existing file only with ``force``.

    Refuses a path inside the run's record folders (``results/``, ``infra/``,
    ``interrupted/``, ``transcripts/``), where ``verify`` would count it as unjournaled.
    """
    for folder in _RECORD_FOLDERS:
        if _inside(out, run / folder):
            raise ExportError(
                f"{out}: inside the run's {folder}/ folder, which holds only journaled "
                "records. Fix: write the export elsewhere (say --out trials.csv)"
            )
    if out.is_dir():
        raise ExportError(f"{out} is a folder. Fix: give a file name (say {out / 'trials.csv'})")
    if out.exists() and not force:
        raise ExportError(f"{out} already exists. Fix: pass --force to replace it")
    try:
        write_atomic(out, data, overwrite=force)
    except FileExistsError:  # created by another process since the check
        raise ExportError(f"{out} already exists. Fix: pass --force to replace it") from None
    except OSError as exc:
        raise ExportError(f"{out}: cannot write ({exc.strerror or exc})") from None


def load_frame(run: Path | str) -> Any:
    """A run's attempts as a pandas DataFrame: the rows and columns of ``pairbench export``.

    Columns use pandas' nullable dtypes (``string``, ``Int64``, ``UInt64`` for the seed,
    ``Float64``, ``boolean``),
    so a missing value is ``pd.NA`` in any column, never 0 and never a float NaN. Needs
    the ``frame`` extra (``pip install 'pairbench[frame]'``).

    **Usage**::

        frame = pairbench.load_frame("runs/mcp-transports-20261129T150000Z-1a2b3c")
        final = frame[frame["final"]]
        final.groupby(["arm", "outcome"]).size()
        final[final["wall_ms_provenance"] == "measured"].groupby("arm")["wall_ms"].median()
    """
    pd: Any = optional_module("pandas", "load_frame")
    table = export_table(Path(run))
    dtypes = {
        "str": "string",
        "int": "Int64",
        "uint": "UInt64",
        "float": "Float64",
        "bool": "boolean",
    }
    data = {
        name: pd.array(table.column(name), dtype=dtypes[table.kinds[name]])
        for name in table.columns
    }
    return pd.DataFrame(data, columns=list(table.columns))
