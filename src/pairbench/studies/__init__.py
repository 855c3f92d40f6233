"""Studies: plugins registered through the ``pairbench.studies`` entry point (the built-in
ones in the sub-packages here, exactly as a third party's). The core uses only this module."""

from pairbench.store._run_info import PriorSpend
from pairbench.studies._study import (
    CliScript,
    DemoRequest,
    DoubleReply,
    ReviewNote,
    RunStart,
    ScoredAnswer,
    Study,
    StudyDataMissing,
    StudyPlot,
    StudyReport,
    StudyRun,
    StudySection,
    load_study,
    registered_studies,
)

__all__ = [
    "CliScript",
    "DemoRequest",
    "DoubleReply",
    "PriorSpend",
    "ReviewNote",
    "RunStart",
    "ScoredAnswer",
    "Study",
    "StudyDataMissing",
    "StudyPlot",
    "StudyReport",
    "StudyRun",
    "StudySection",
    "load_study",
    "registered_studies",
]
