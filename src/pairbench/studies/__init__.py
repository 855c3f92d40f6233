"""Studies: plugins registered through the ``pairbench.studies`` entry point (the built-in
ones in the sub-packages here, exactly as a third party's). The core uses only this module.

Its names load on first use (``pairbench._lazy``): a study's fixture server, started as
``python -m pairbench.studies.<name>.<server>`` once per stdio trial, imports this package
first and need not build the study models it never uses.
"""

from typing import TYPE_CHECKING

from pairbench._lazy import lazy_exports

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        name: "pairbench.store._run_info" if name == "PriorSpend" else "pairbench.studies._study"
        for name in __all__
    },
)
