"""Attribution engines: the system under test of the attribution-reliability study.

An arm names its engine with an ``EngineSpec``; ``run_engine`` runs it on one
``EngineRequest`` however it is plugged in (``command``, ``python``, ``http`` or a name
registered under ``pairbench.engines``) and returns an ``EngineOutcome``: the report, or a
runtime failure of a named kind. ``engine_identity`` pins which engine that was.
"""

from pairbench.studies.attribution_reliability.engines._adapter import EngineAdapter
from pairbench.studies.attribution_reliability.engines._command import CommandEngine
from pairbench.studies.attribution_reliability.engines._http import HttpEngine
from pairbench.studies.attribution_reliability.engines._identity import (
    EngineIdentity,
    engine_identity,
    hash_path,
)
from pairbench.studies.attribution_reliability.engines._models import (
    REPORT_SCHEMA,
    REQUEST_SCHEMA,
    Budget,
    EngineError,
    EngineReport,
    EngineRequest,
    Evidence,
    Finding,
    Observation,
    Persona,
    Quote,
    RecordedSession,
    RecordedStep,
    ReportUser,
    SetAside,
    Usage,
)
from pairbench.studies.attribution_reliability.engines._outcome import (
    EngineOutcome,
    EngineSignals,
    FailureKind,
)
from pairbench.studies.attribution_reliability.engines._protocol import AttributionEngine
from pairbench.studies.attribution_reliability.engines._python import PythonEngine
from pairbench.studies.attribution_reliability.engines._resolve import engine_names
from pairbench.studies.attribution_reliability.engines._run import default_timeout, run_engine
from pairbench.studies.attribution_reliability.engines._spec import EngineSpec

__all__ = [
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
