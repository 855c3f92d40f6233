"""The published JSON Schemas: equal to the models, valid JSON Schema, and as strict."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from pairbench.studies.attribution_reliability.engines import (
    EngineReport,
    EngineRequest,
    Persona,
    RecordedSession,
    RecordedStep,
)
from pairbench.studies.attribution_reliability.engines._schema_files import (
    published,
    schema_files,
)


def test_the_committed_files_are_what_the_models_generate() -> None:
    for path, text in schema_files().items():
        assert path.is_file(), f"{path} is missing: run make docs"
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run make docs"


@pytest.mark.parametrize("kind", ["request", "report"])
def test_each_file_is_valid_json_schema(kind: str) -> None:
    jsonschema.Draft202012Validator.check_schema(published(kind))


def errors(kind: str, instance: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(published(kind))
    return sorted(
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(instance)
    )


def test_the_requests_pairbench_sends_validate() -> None:
    scan = EngineRequest(
        mode="scan", start_url="http://127.0.0.1:1/v/x", model_seed=3,
        personas=[Persona(user="u1", goal="Book a table.")],
    )  # fmt: skip
    step = RecordedStep(step=1, action="goto", hand="ok", url="http://127.0.0.1:1/v/x", t_ms=1)
    judge = scan.model_copy(
        update={"mode": "judge", "sessions": [RecordedSession(user="u1", goal="g", steps=[step])]}
    )
    assert errors("request", scan.wire()) == []
    assert errors("request", judge.wire()) == []


def test_the_schema_refuses_what_the_model_refuses() -> None:
    # One rule, two readers: an extra key, a missing field and a wrong enum value void a
    # report for the JSON Schema exactly as for EngineReport.
    bad = {
        "status": "completed",
        "confidence": 0.9,
        "findings": [{"id": "f1", "claim_scope": "everything"}],
        "set_aside": [{"summary": "slow"}],
    }
    assert errors("report", bad) == [
        ": Additional properties are not allowed ('confidence' was unexpected)",
        "findings.0.claim_scope: 'everything' is not one of "
        "['product_behavior', 'product_absence', 'product_content', 'usability']",
        "set_aside.0: 'reason' is a required property",
    ]
    with pytest.raises(ValueError):
        EngineReport.model_validate(bad)
    assert errors("report", {"status": "completed"}) == []


@pytest.mark.browser
def test_the_heuristic_engine_requests_and_reports_validate() -> None:
    # The built-in reference engine on the two calibration cases check-engine uses, in real
    # Chromium: what pairbench sent and what the engine answered, read by jsonschema.
    import os

    from helpers.common import skip_outside_ci
    from pairbench.fixtures._webmcp import chromium_problem
    from pairbench.studies.attribution_reliability._conformance import check_engine
    from pairbench.studies.attribution_reliability.engines import EngineSpec
    from pairbench.studies.attribution_reliability.site import SiteBinding

    problem = chromium_problem()
    if problem:
        skip_outside_ci(problem)
    spec = EngineSpec.parse({"engine": "heuristic", "settings": {"no_effect_wait_s": 2}})
    checks = check_engine(spec, binding=SiteBinding(), env=os.environ)
    assert [c.problems for c in checks] == [[], []]
    for check in checks:
        assert check.request is not None and check.outcome is not None
        assert check.outcome.report is not None
        assert errors("request", check.request.wire()) == []
        assert errors("report", check.outcome.report.wire()) == []
