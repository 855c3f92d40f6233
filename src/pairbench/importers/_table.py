"""Any per-sample table (CSV, JSONL, Parquet) through a short column mapping.

``--option id=question --option arm=model --option outcome=correct`` (or the same keys in a
``--mapping`` YAML file). Parquet is read through pyarrow (``pip install 'pairbench[frame]'``)
in record batches; CSV and JSONL line by line.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pairbench._errors import ImportRefused
from pairbench.importers._base import (
    Importer,
    ImportSettings,
    LogFacts,
    SampleRecord,
    iter_jsonl,
    sha256_of,
    sha256_text,
)

_TRUE = {"1", "true", "yes", "pass", "passed", "correct", "c", "1.0"}
_FALSE = {"0", "false", "no", "fail", "failed", "incorrect", "i", "0.0"}
_INFRA = {"error", "infra", "skipped"}


class TableSettings(ImportSettings):
    """The mapping: which column holds what (``--option KEY=COLUMN`` or ``--mapping FILE``)."""

    id: str = "id"
    """The sample id column."""
    outcome: str = "passed"
    """The outcome column: pass/fail (true/false, 1/0, pass/fail) or a score."""
    epoch: str | None = None
    """The epoch/repeat column (numbers from 1 or 0; default: every sample once)."""
    arm: str | None = None
    """The arm column (model, prompt); without it each file is one arm named by its stem."""
    cluster: str | None = None
    """A column grouping samples beyond their repeats (topic, source document)."""
    input: str | None = None
    """A column holding each sample's input, hashed to prove arms saw the same input."""
    pass_at: float = 1.0
    """A numeric outcome passes at or above this."""


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        yield from iter_jsonl(path)
    elif suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as fh:
            yield from csv.DictReader(fh)
    elif suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportRefused(
                f"{path}: reading Parquet needs pyarrow: pip install 'pairbench[frame]'"
            ) from None
        for batch in pq.ParquetFile(path).iter_batches(batch_size=8192):
            yield from batch.to_pylist()
    else:
        raise ImportRefused(
            f"{path}: unknown table format {suffix!r}. Fix: a .csv, .jsonl or .parquet file"
        )


def _columns(path: Path) -> list[str]:
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.ParquetFile(path).schema_arrow.names)
    for row in _rows(path):
        return list(row)
    return []


class TableImporter(Importer[TableSettings]):
    """Per-sample rows; one arm per file, or per value of the ``arm`` column."""

    name = "table"
    description = "per-sample CSV, JSONL or Parquet through a column mapping"
    metric_option = "outcome"
    settings_model = TableSettings

    def scan(self, path: Path, settings: TableSettings) -> LogFacts:
        if not path.is_file():
            raise ImportRefused(f"{path}: no such file")
        columns = _columns(path)
        named = {
            key: getattr(settings, key)
            for key in ("id", "outcome", "epoch", "arm", "cluster", "input")
            if getattr(settings, key) is not None
        }
        absent = {k: c for k, c in named.items() if c not in columns}
        if absent:
            which = ", ".join(f"{k}={c!r}" for k, c in absent.items())
            raise ImportRefused(
                f"{path}: the mapping names columns the file does not have ({which}); its "
                f"columns are {', '.join(columns) or 'none'}. Fix: --option KEY=COLUMN with "
                "one of those"
            )
        if settings.arm is None:
            arms: tuple[str, ...] = (path.stem,)
        else:
            # One streaming pass over the arm column: the arms in order of appearance.
            seen: dict[str, None] = {}
            for row in _rows(path):
                seen.setdefault(str(row[settings.arm]), None)
            arms = tuple(seen)
        return LogFacts(
            harness="table",
            path=str(path),
            sha256=sha256_of(path),
            arms=arms,
            primary_metric=settings.outcome,
        )

    def samples(
        self, path: Path, facts: LogFacts, settings: TableSettings
    ) -> Iterator[SampleRecord]:
        for number, row in enumerate(_rows(path), 2 if path.suffix.lower() == ".csv" else 1):
            yield _record(path, number, row, facts, settings)


def _outcome(value: Any, pass_at: float) -> tuple[str, float | None]:
    if isinstance(value, bool):
        return ("passed" if value else "failed"), float(value)
    text = str(value).strip().lower() if value is not None else ""
    if text in _TRUE:
        return "passed", 1.0
    if text in _FALSE:
        return "failed", 0.0
    if text in _INFRA or text == "":
        return "infra", None
    number = float(text)  # ValueError: named by the caller
    return ("passed" if number >= pass_at else "failed"), number


def _record(
    path: Path, number: int, row: dict[str, Any], facts: LogFacts, s: TableSettings
) -> SampleRecord:
    where = f"{path}: row {number}"
    try:
        outcome, score = _outcome(row.get(s.outcome), s.pass_at)
    except ValueError:
        raise ImportRefused(
            f"{where}: outcome column {s.outcome!r} holds {row.get(s.outcome)!r}, neither "
            "pass/fail nor a number. Fix: map --option outcome= to a pass/fail or score column"
        ) from None
    epoch = 1
    if s.epoch is not None:
        try:
            epoch = int(float(row[s.epoch]))
        except (TypeError, ValueError):
            raise ImportRefused(f"{where}: epoch {row[s.epoch]!r} is not a number") from None
    return SampleRecord(
        arm=str(row[s.arm]) if s.arm is not None else facts.arms[0],
        sample_id=str(row[s.id]),
        epoch=epoch,
        outcome=outcome,
        scores={s.outcome: score} if score is not None else {},
        reason="no outcome recorded" if outcome == "infra" else None,
        cluster=str(row[s.cluster]) if s.cluster is not None else None,
        input_hash=sha256_text(row[s.input]) if s.input is not None else None,
    )
