"""Studies: plugins registered through the ``pairbench.studies`` entry point (the built-in
ones in the sub-packages here, exactly as a third party's). The core uses only this module."""

from pairbench.studies._study import (
    DemoRequest,
    DoubleReply,
    ReviewNote,
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
    "DemoRequest",
    "DoubleReply",
    "ReviewNote",
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
