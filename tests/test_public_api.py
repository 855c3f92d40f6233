"""The public API changes only by a deliberate edit of this list (like httpx's guard)."""

import pairbench

EXPECTED = [
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


def test_public_api_is_exactly_the_expected_names() -> None:
    assert sorted(pairbench.__all__) == sorted(EXPECTED)
    assert pairbench.__all__ == sorted(pairbench.__all__)  # alphabetised, like httpx


def test_every_public_name_resolves() -> None:
    for name in pairbench.__all__:
        assert getattr(pairbench, name) is not None, name


def test_every_package_init_only_reexports_declared_names() -> None:
    import importlib

    for package in (
        "agents",
        "analysis",
        "fixtures",
        "grading",
        "report",
        "runner",
        "schedule",
        "spec",
        "store",
        "studies",
    ):
        module = importlib.import_module(f"pairbench.{package}")
        assert hasattr(module, "__all__"), package
        for name in module.__all__:
            assert hasattr(module, name), f"pairbench.{package}.{name}"
