"""The adapter's infra rule for a model provider that refuses before any call succeeded."""

from __future__ import annotations

import pytest


def test_a_provider_refusal_before_any_model_success_is_infra_and_after_one_is_not() -> None:
    from pairbench.agents._protocol import InfraFailure, RunSignals
    from pairbench.studies.attribution_reliability._session_output import provider_refused
    from pairbench.studies.attribution_reliability.engines import EngineReport

    refused = EngineReport.model_validate(
        {"status": "failed", "errors": [{"kind": "model", "message": "auth: 401 bad key"}]}
    )
    signals = RunSignals()
    with pytest.raises(InfraFailure, match="auth: 401"):
        provider_refused(refused, signals)
    other = EngineReport.model_validate(
        {"status": "failed", "errors": [{"kind": "model", "message": "the model said no"}]}
    )
    provider_refused(other, signals)  # an ordinary model error stays the engine's failure
    worked = EngineReport.model_validate(
        {"status": "completed", "usage": [{"model": "m", "provenance": "measured"}]}
    )
    provider_refused(worked, signals)
    assert signals.model_call_succeeded
    provider_refused(refused, signals)  # after a success: a runtime failure, not infra


def test_pairbench_check_names_a_malformed_header_reference() -> None:
    from pairbench.agents._settings import settings_problems
    from pairbench.studies.attribution_reliability._agent import AttributionAdapter

    engine = {"engine": "http", "url": "http://127.0.0.1:1", "headers": {"X-Key": "${TOKEN}"}}
    ((where, message, _),) = settings_problems(AttributionAdapter, {"engine": engine})
    assert where == ("engine",)
    assert "engine.headers.X-Key: '${TOKEN}' has a malformed reference at character 1" in message
