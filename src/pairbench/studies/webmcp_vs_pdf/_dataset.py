"""The frozen inputs: metadat's ``dat.raudenbush1985`` (19 records) and the frozen PDF's identity.

The PDF constants live here, not in ``_pdf``, so that importing the package does not import
``_pdf`` (which runs as ``python -m pairbench.studies.webmcp_vs_pdf._pdf OUT``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

STUDY_ROOT = Path(__file__).parent / "study"
"""The study folder: protocol, methods, data and the frozen PDF."""
DATASET_PATH = STUDY_ROOT / "data" / "raudenbush1985.csv"
PDF_PATH = STUDY_ROOT / "benchmark-baseline.pdf"
METHODS_PATH = STUDY_ROOT / "methods.md"
PDF_SHA256 = "ba18f80eddcb57e9ba5491ea9723ae25f47e3bee256e8453a75752744e1600c9"
"""SHA-256 of the committed ``benchmark-baseline.pdf``; a test rebuilds and compares."""
PDF_WRITER_VERSION = "5.1.0"
"""The reportlab version the committed PDF was built with; another may change bytes."""
BASELINE_VERSION = "2026-09-04.v1"
BASELINE_EPOCH = 1788480000
"""2026-09-04T00:00:00Z: the PDF's creation and modification date."""
DATASET_COLUMNS = (
    "record",
    "study",
    "author",
    "year",
    "weeks",
    "setting",
    "tester",
    "n1i",
    "n2i",
    "yi",
    "vi",
)


@dataclass(frozen=True)
class Record:
    """One effect-size record; ``record`` (s01..s19) is the name the protocol uses."""

    record: str
    study: int
    author: str
    year: int
    weeks: int
    setting: str
    tester: str
    n1i: int
    n2i: int
    yi: float
    """Standardized mean difference."""
    vi: float
    """Its sampling variance."""
    yi_text: str
    """``yi`` exactly as written in the CSV (the PDF and page show this text)."""
    vi_text: str


@cache
def load_dataset(path: Path = DATASET_PATH) -> tuple[Record, ...]:
    """Read the dataset (cached; the file is frozen).

    **Usage**::

        records = load_dataset()
        yi = [r.yi for r in records]; vi = [r.vi for r in records]
    """
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != DATASET_COLUMNS:
            raise ValueError(f"{path}: expected columns {DATASET_COLUMNS}")
        return tuple(
            Record(
                record=row["record"],
                study=int(row["study"]),
                author=row["author"],
                year=int(row["year"]),
                weeks=int(row["weeks"]),
                setting=row["setting"],
                tester=row["tester"],
                n1i=int(row["n1i"]),
                n2i=int(row["n2i"]),
                yi=float(row["yi"]),
                vi=float(row["vi"]),
                yi_text=row["yi"],
                vi_text=row["vi"],
            )
            for row in reader
        )
