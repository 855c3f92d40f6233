"""pairbench: pre-registered, paired A/B experiments on AI agents.

**Usage**::

    import pairbench
    outcome = pairbench.start_run(Path("experiment.yaml"), Path("runs"), run_seed=1)
    pairbench.write_report(outcome.run_dir)
"""

from pairbench._errors import (
    InfraStop,
    PairbenchError,
    RegistryError,
    ResumeRefused,
    RunDirError,
    RunInUse,
    SpecError,
)
from pairbench._version import __version__
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

__all__ = [
    "Agent",
    "AgentContext",
    "AgentOutput",
    "AuditEntry",
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
