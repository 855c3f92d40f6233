"""The engines package's public names change only on purpose."""

from __future__ import annotations

from pairbench.studies.attribution_reliability import engines

PUBLIC = [
    "REPORT_SCHEMA",
    "REQUEST_SCHEMA",
    "AttributionEngine",
    "Budget",
    "CommandEngine",
    "EngineAdapter",
    "EngineError",
    "EngineIdentity",
    "EngineOutcome",
    "EngineReport",
    "EngineRequest",
    "EngineSignals",
    "EngineSpec",
    "Evidence",
    "FailureKind",
    "Finding",
    "HttpEngine",
    "Observation",
    "Persona",
    "PythonEngine",
    "Quote",
    "RecordedSession",
    "RecordedStep",
    "ReportUser",
    "SetAside",
    "Usage",
    "default_timeout",
    "engine_identity",
    "engine_names",
    "hash_path",
    "run_engine",
]


def test_the_public_names_are_deliberate() -> None:
    assert engines.__all__ == PUBLIC
    assert all(hasattr(engines, name) for name in PUBLIC)
