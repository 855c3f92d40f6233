"""The summary's models (``_schema``) and the schema reference generated from them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel, ValidationError

from helpers.report_builders import RunScenario, make_planted, make_planted_run, with_requests
from pairbench._schema_doc import (
    TARGET,
    _attribute_docs,
    _walk,
    schema_reference,
    study_references,
)
from pairbench.report import SCHEMA_ID
from pairbench.report._write import summary_json
from pairbench.report.summary import _sections
from pairbench.report.summary._build import build_summary, summarize
from pairbench.report.summary._frame import Frame
from pairbench.report.summary._schema import Summary
from pairbench.store import TrialTable
from pairbench.store._records import Grade, MountedProof

MODELS = list(_walk(Summary))
"""Every model of the summary, from the top down."""


HYPOTHESES: list[dict[str, Any]] = [
    {"kind": "equivalence", "metric": "input_tokens", "margin": "10%"},
    {"kind": "rate-equivalence", "metric": "injection", "margin": 0.1},
]


def _reviewed_planted() -> dict[str, Any]:
    """A run that reaches every model: censored timeouts, clustered tasks, a review note,
    declared hypotheses."""
    note = {"arm": "control", "task": "task-0", "trial": 0, "verdict": "ok", "reviewer": "r"}
    results = make_planted(timeout_arm="control")
    # One graded with per-field verdicts (a scored study's grader): reaches FieldAccuracy.
    fields = [{"path": "a.b", "correct": True}, {"path": "a.c", "correct": False}]
    grade = Grade(outcome="failed", reason="wrong: a.c", details={"fields": fields})
    results[0] = results[0].model_copy(update={"grade": grade})
    # Model requests in one pair, diverging at the second body: reaches the request spreads
    # and the invariance check's divergence list.
    for i, r in enumerate(results[:3]):
        if r.arm in ("treatment", "control"):
            replies = ["r1", "r2"]
            results[i] = with_requests(r, ["b1", f"b2-{r.arm}"], replies, prompt_tokens=10)
    table = TrialTable.from_results(results, [])
    declared = [
        h | {"id": f"h{i}", "text": "t", "arms": ["treatment", "control"]}
        for i, h in enumerate(HYPOTHESES)
    ]
    run = make_planted_run(experiment_model={"hypotheses": declared})
    return summarize(run, table, journal_head="ab" * 32, reviews=[note])


def _instances(value: object, out: set[type[BaseModel]]) -> set[type[BaseModel]]:
    if isinstance(value, BaseModel):
        out.add(type(value))
        for name in type(value).model_fields:
            _instances(getattr(value, name), out)
    elif isinstance(value, list):
        for v in value:
            _instances(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _instances(v, out)
    return out


def test_committed_schema_reference_is_current() -> None:
    # Fix: make docs (python -m pairbench._schema_doc) and commit the result.
    assert TARGET.read_text(encoding="utf-8") == schema_reference()
    assert Path(__file__).parents[2] / "src/pairbench/report/summary/SUMMARY_SCHEMA.md" == TARGET


def test_each_built_in_studys_schema_reference_is_current() -> None:
    # Fix: make docs, and commit each study's SCHEMA.md beside its part's model.
    references = study_references()
    assert len(references) >= 2  # runtime-revision-ab and attribution-reliability
    for path, text in references.items():
        assert path.read_text(encoding="utf-8") == text, path
        assert path.parent.parent.parent.name == "studies"  # inside the study, not the core


def test_every_model_and_field_is_documented() -> None:
    for model in MODELS:
        assert (model.__doc__ or "").strip(), model.__name__
        docs = _attribute_docs(model)
        for name, field in model.model_fields.items():
            # A shared key (``ArmName``) carries its meaning as the field's description.
            assert (field.description or docs.get(name, "")).strip(), f"{model.__name__}.{name}"
            assert f"| `{field.alias or name}` |" in schema_reference()


def test_every_field_is_required() -> None:
    # A summary that validates then has every documented key: none may fall to a default.
    missing = [
        f"{m.__name__}.{name}"
        for m in MODELS
        for name, field in m.model_fields.items()
        if not field.is_required()
    ]
    assert missing == []


def test_real_summaries_reach_every_model(scenario: RunScenario) -> None:
    seen: set[type[BaseModel]] = set()
    # The study slot is reached by a run whose experiment names a study.
    with_study = {
        **build_summary(*scenario),
        "study": {"name": "acme", "version": "1", "schema": "acme/1", "data": {}, "missing": None},
    }
    # The mounted-byte proof section is reached by a run whose attempts carry a proof.
    run, results, infra = scenario
    proven = MountedProof(status="ok", coverage="3/3", summary="3 production file(s) loaded")
    with_proof = build_summary(
        run, [r.model_copy(update={"mounted_proof": proven}) for r in results], infra
    )
    assert with_proof["mounted_proof"][0]["ok"] > 0
    # The primary section is reached by runs that declare one, of each unit.
    declared = {
        "primary": [
            {"arms": ["treatment", "control"], "test": "mcnemar-exact"},
            {"arms": ["treatment", "other"], "test": "sign-flip"},
        ]
    }
    with_primary = build_summary(make_planted_run(experiment_model=declared), make_planted(), [])
    assert len(with_primary["primary"]) == 2
    summaries = (build_summary(*scenario), _reviewed_planted(), with_study, with_proof)
    for summary in (*summaries, with_primary):
        _instances(Summary.model_validate(summary, strict=True), seen)
    assert {m.__name__ for m in MODELS} - {m.__name__ for m in seen} == set()


def test_summary_json_reads_back_through_the_model(scenario: RunScenario) -> None:
    for summary in (build_summary(*scenario), _reviewed_planted()):
        text = summary_json(summary)
        again = Summary.model_validate_json(text).model_dump(mode="json")
        assert summary_json(again) == text  # the same bytes, keys in the same order


def test_schema_id_is_the_models_literal() -> None:
    assert get_args(Summary.model_fields["schema_id"].annotation) == (SCHEMA_ID,)
    assert schema_reference().startswith(f"# `summary.json` — schema `{SCHEMA_ID}`")


@pytest.mark.parametrize(
    "path",
    [(), ("arms", 0), ("pairs", 0, "metrics", "wall_ms", "median_paired_difference")],
)
def test_a_key_without_a_field_fails(scenario: RunScenario, path: tuple[str | int, ...]) -> None:
    summary = copy.deepcopy(build_summary(*scenario))
    part: Any = summary
    for step in path:
        part = part[step]
    part["undocumented"] = 1
    with pytest.raises(ValidationError, match="undocumented"):
        Summary.model_validate(summary)


def test_a_value_of_the_wrong_type_fails(scenario: RunScenario) -> None:
    summary = copy.deepcopy(build_summary(*scenario))
    summary["arms"][0]["success"] = 0.7  # a proportion is an object, not its estimate
    with pytest.raises(ValidationError, match="success"):
        Summary.model_validate(summary)


def test_run_json_values_its_reader_accepts_are_typed_not_refused(
    scenario: RunScenario,
) -> None:
    # read_run_info checks run.json as leniently as summarize validates, to the same types.
    run, results, infra = scenario
    s = build_summary(run | {"campaign": "3", "lock_verified": 1}, results, infra)
    assert (s["run"]["sitting"], s["run"]["lock_verified"]) == (3, True)


def test_summarize_refuses_a_section_the_model_does_not_know(
    scenario: RunScenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    security = _sections.security

    def with_extra(frame: Frame) -> list[dict[str, Any]]:
        return [row | {"new_probe": 0} for row in security(frame)]

    monkeypatch.setattr(_sections, "security", with_extra)
    with pytest.raises(ValidationError, match="new_probe"):
        build_summary(*scenario)
