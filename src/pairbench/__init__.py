"""pairbench: pre-registered, paired A/B experiments on AI agents.

**Usage**::

    import pairbench
    outcome = pairbench.start_run(Path("experiment.yaml"), Path("runs"), run_seed=1)
    pairbench.write_report(outcome.run_dir)
"""

from typing import TYPE_CHECKING

from pairbench._errors import (
    InfraStop,
    PairbenchError,
    RegistryError,
    ResumeRefused,
    RunDirError,
    RunInUse,
    SpecError,
)
from pairbench._lazy import lazy_exports
from pairbench._version import __version__

if TYPE_CHECKING:
    from pairbench.agents import (
        Agent,
        AgentContext,
        AgentOutput,
        CommandAgent,
        InfraFailure,
        ScriptedAgent,
        Transcript,
        scrubbed_env,
    )
    from pairbench.fixtures import AuditEntry, Fixture, FixtureState, Probe
    from pairbench.grading import GradeInput, Grader
    from pairbench.report import write_report
    from pairbench.runner import RunOutcome, resume_run, start_run
    from pairbench.schedule import Schedule, TrialKey, build_schedule, derive_seed, model_seed
    from pairbench.spec import (
        Experiment,
        LoadedExperiment,
        Problem,
        canonical_hash,
        check_experiment,
        load_experiment,
    )
    from pairbench.store import Grade, Metric, RunDir, TrialResult, load_frame, load_run
    from pairbench.studies import (
        CliScript,
        DemoRequest,
        ReviewNote,
        ScoredAnswer,
        Study,
        StudyDataMissing,
        StudyPlot,
        StudyReport,
        StudyRun,
        StudySection,
    )

# Imported when first used (see _lazy): importing the package builds nothing.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Agent": "pairbench.agents",
        "AgentContext": "pairbench.agents",
        "AgentOutput": "pairbench.agents",
        "AuditEntry": "pairbench.fixtures",
        "CliScript": "pairbench.studies",
        "CommandAgent": "pairbench.agents",
        "DemoRequest": "pairbench.studies",
        "Experiment": "pairbench.spec",
        "Fixture": "pairbench.fixtures",
        "FixtureState": "pairbench.fixtures",
        "Grade": "pairbench.store",
        "GradeInput": "pairbench.grading",
        "Grader": "pairbench.grading",
        "InfraFailure": "pairbench.agents",
        "LoadedExperiment": "pairbench.spec",
        "Metric": "pairbench.store",
        "Probe": "pairbench.fixtures",
        "Problem": "pairbench.spec",
        "ReviewNote": "pairbench.studies",
        "RunDir": "pairbench.store",
        "RunOutcome": "pairbench.runner",
        "Schedule": "pairbench.schedule",
        "ScoredAnswer": "pairbench.studies",
        "ScriptedAgent": "pairbench.agents",
        "Study": "pairbench.studies",
        "StudyDataMissing": "pairbench.studies",
        "StudyPlot": "pairbench.studies",
        "StudyReport": "pairbench.studies",
        "StudyRun": "pairbench.studies",
        "StudySection": "pairbench.studies",
        "Transcript": "pairbench.agents",
        "TrialKey": "pairbench.schedule",
        "TrialResult": "pairbench.store",
        "build_schedule": "pairbench.schedule",
        "canonical_hash": "pairbench.spec",
        "check_experiment": "pairbench.spec",
        "derive_seed": "pairbench.schedule",
        "load_experiment": "pairbench.spec",
        "load_frame": "pairbench.store",
        "load_run": "pairbench.store",
        "model_seed": "pairbench.schedule",
        "resume_run": "pairbench.runner",
        "scrubbed_env": "pairbench.agents",
        "start_run": "pairbench.runner",
        "write_report": "pairbench.report",
    },
)

__all__ = [
    "Agent",
    "AgentContext",
    "AgentOutput",
    "AuditEntry",
    "CliScript",
    "CommandAgent",
    "DemoRequest",
    "Experiment",
    "Fixture",
    "FixtureState",
    "Grade",
    "GradeInput",
    "Grader",
    "InfraFailure",
    "InfraStop",
    "LoadedExperiment",
    "Metric",
    "PairbenchError",
    "Probe",
    "Problem",
    "RegistryError",
    "ResumeRefused",
    "ReviewNote",
    "RunDir",
    "RunDirError",
    "RunInUse",
    "RunOutcome",
    "Schedule",
    "ScoredAnswer",
    "ScriptedAgent",
    "SpecError",
    "Study",
    "StudyDataMissing",
    "StudyPlot",
    "StudyReport",
    "StudyRun",
    "StudySection",
    "Transcript",
    "TrialKey",
    "TrialResult",
    "__version__",
    "build_schedule",
    "canonical_hash",
    "check_experiment",
    "derive_seed",
    "load_experiment",
    "load_frame",
    "load_run",
    "model_seed",
    "resume_run",
    "scrubbed_env",
    "start_run",
    "write_report",
]
