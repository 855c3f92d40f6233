"""The first pass's records, kept on disk for the second: a harness's log is parsed once.

Parsing is the dear part of reading a log (an Inspect sample carries its whole event
stream); the pairing pass writes each :class:`SampleRecord` (small: no events, no messages) as
one JSON line to a temporary file, and the writing pass reads those back. Memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from pairbench.importers._base import SampleRecord


class Spool:
    """One JSONL file per source under ``folder`` (a temporary directory the caller owns)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _file(self, source: int) -> Path:
        return self.folder / f"{source}.jsonl"

    def tee(self, source: int, records: Iterable[SampleRecord]) -> Iterator[SampleRecord]:
        """``records``, each also written to the source's spool file."""
        with self._file(source).open("w", encoding="utf-8") as fh:
            for record in records:
                fh.write(record.model_dump_json())
                fh.write("\n")
                yield record

    def read(self, source: int) -> Iterator[SampleRecord]:
        """The source's records, as the first pass saw them."""
        with self._file(source).open(encoding="utf-8") as fh:
            for line in fh:
                yield SampleRecord.model_validate_json(line)
