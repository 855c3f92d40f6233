"""The run directory: atomic writes, the journal, results, transcripts, the trial table and
exports."""

from typing import TYPE_CHECKING, Any

from pairbench._atomic import sha256_file, write_atomic
from pairbench.store._events import JournalEvent, TrialRow
from pairbench.store._export import load_frame
from pairbench.store._journal import Journal
from pairbench.store._load_run import LoadedRun, load_run, read_run_info
from pairbench.store._records import (
    FINAL_OUTCOMES,
    SCORED_OUTCOMES,
    Grade,
    Metric,
    Metrics,
    Outcome,
    Security,
    Seeding,
    ToolCallTiming,
    TrialResult,
    Usage,
    Validity,
    usage_metrics,
)
from pairbench.store._row import trial_row
from pairbench.store._run_dir import RunDir, new_run_id
from pairbench.store._run_record import RunRecord
from pairbench.store._transcript import Transcript

if TYPE_CHECKING:
    from pairbench.store._load_table import RunTable, load_table
    from pairbench.store._table import TrialTable


def __getattr__(name: str) -> Any:
    # The trial table needs numpy; load it on use so that running stays light to start.
    if name == "TrialTable":
        from pairbench.store._table import TrialTable

        return TrialTable
    if name in ("RunTable", "load_table"):
        from pairbench.store import _load_table

        return getattr(_load_table, name)
    raise AttributeError(f"module 'pairbench.store' has no attribute {name!r}")


__all__ = [
    "FINAL_OUTCOMES",
    "SCORED_OUTCOMES",
    "Grade",
    "Journal",
    "JournalEvent",
    "LoadedRun",
    "Metric",
    "Metrics",
    "Outcome",
    "RunDir",
    "RunRecord",
    "RunTable",
    "Security",
    "Seeding",
    "ToolCallTiming",
    "Transcript",
    "TrialResult",
    "TrialRow",
    "TrialTable",
    "Usage",
    "Validity",
    "load_frame",
    "load_run",
    "load_table",
    "new_run_id",
    "read_run_info",
    "sha256_file",
    "trial_row",
    "usage_metrics",
    "write_atomic",
]
