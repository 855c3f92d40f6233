"""The run directory: atomic writes, the journal, results and transcripts."""

from pairbench.store._atomic import sha256_file, write_atomic
from pairbench.store._journal import Journal
from pairbench.store._load_run import LoadedRun, load_run
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
    Validity,
)
from pairbench.store._run_dir import RunDir, new_run_id

__all__ = [
    "FINAL_OUTCOMES",
    "SCORED_OUTCOMES",
    "Grade",
    "Journal",
    "LoadedRun",
    "Metric",
    "Metrics",
    "Outcome",
    "RunDir",
    "Security",
    "Seeding",
    "ToolCallTiming",
    "TrialResult",
    "Validity",
    "load_run",
    "new_run_id",
    "sha256_file",
    "write_atomic",
]
