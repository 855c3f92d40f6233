"""The run directory: atomic writes, the journal, results, transcripts, the trial table and
exports."""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
    from pairbench._atomic import sha256_file, write_atomic
    from pairbench.store._events import JournalEvent, TrialRow
    from pairbench.store._export import load_frame
    from pairbench.store._journal import Journal
    from pairbench.store._load_run import LoadedRun, load_run, read_run_info
    from pairbench.store._load_table import RunTable, load_table
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
    from pairbench.store._table import TrialTable
    from pairbench.store._transcript import Transcript

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "FINAL_OUTCOMES": "pairbench.store._records",
        "Grade": "pairbench.store._records",
        "Journal": "pairbench.store._journal",
        "JournalEvent": "pairbench.store._events",
        "LoadedRun": "pairbench.store._load_run",
        "Metric": "pairbench.store._records",
        "Metrics": "pairbench.store._records",
        "Outcome": "pairbench.store._records",
        "RunDir": "pairbench.store._run_dir",
        "RunRecord": "pairbench.store._run_record",
        "RunTable": "pairbench.store._load_table",
        "SCORED_OUTCOMES": "pairbench.store._records",
        "Security": "pairbench.store._records",
        "Seeding": "pairbench.store._records",
        "ToolCallTiming": "pairbench.store._records",
        "Transcript": "pairbench.store._transcript",
        "TrialResult": "pairbench.store._records",
        "TrialRow": "pairbench.store._events",
        "TrialTable": "pairbench.store._table",
        "Usage": "pairbench.store._records",
        "Validity": "pairbench.store._records",
        "load_frame": "pairbench.store._export",
        "load_run": "pairbench.store._load_run",
        "load_table": "pairbench.store._load_table",
        "new_run_id": "pairbench.store._run_dir",
        "read_run_info": "pairbench.store._load_run",
        "sha256_file": "pairbench._atomic",
        "trial_row": "pairbench.store._row",
        "usage_metrics": "pairbench.store._records",
        "write_atomic": "pairbench._atomic",
    },
)

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
