"""The 13-field scorer and the grader, including the pre-registered fence and NaN rules."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pairbench.grading._protocol import GradeInput
from pairbench.spec._task import Task
from pairbench.studies.webmcp_vs_pdf import (
    TOTAL_FIELDS,
    grade_webmcp_answer,
    reference_answer,
    score_answer,
)


def _answer(**changes: Any) -> dict[str, Any]:
    """The reference answer with ``section__field=value`` replacements."""
    answer = copy.deepcopy(reference_answer())
    for key, value in changes.items():
        section, name = key.split("__")
        answer[section][name] = value
    return answer


def _text(answer: dict[str, Any]) -> str:
    return json.dumps(answer)


def test_reference_scores_13_of_13() -> None:
    score = score_answer(_text(_answer()))
    assert (score.correct, score.total, score.parse_failure) == (13, 13, False)
    assert len(score.fields) == TOTAL_FIELDS == 13 and score.label == "13/13"
    assert [f.path for f in score.fields][:2] == ["overall.k", "overall.estimate"]


def test_rounded_answer_within_tolerance_scores_13() -> None:
    ref = reference_answer()
    rounded = json.loads(json.dumps(ref))
    for section in ("overall", "exclude_s04"):
        for name in ("estimate", "ci_lower", "ci_upper", "p"):
            rounded[section][name] = round(ref[section][name], 4)
    rounded["bias"]["egger_p"] = round(ref["bias"]["egger_p"], 6)
    assert score_answer(_text(rounded)).correct == 13


@pytest.mark.parametrize(
    ("changes", "wrong"),
    [
        ({"overall__estimate": 0.0837082 + 0.00051}, "overall.estimate"),
        ({"overall__ci_lower": -0.017}, "overall.ci_lower"),  # off by 0.000515
        ({"bias__egger_p": 0.0574256 + 0.00001}, "bias.egger_p"),
        ({"bias__egger_p": 0.0574}, "bias.egger_p"),  # fine for 0.0005, not for 0.000005
        ({"overall__k": 18}, "overall.k"),
        ({"overall__k": "19"}, "overall.k"),
        ({"overall__k": True}, "overall.k"),
        ({"exclude_s04__excluded": ["S04"]}, "exclude_s04.excluded"),
        ({"exclude_s04__excluded": "s04"}, "exclude_s04.excluded"),
        ({"exclude_s04__excluded": ["s04", "s05"]}, "exclude_s04.excluded"),
        ({"bias__rule_outcome": "Inconclusive"}, "bias.rule_outcome"),
        ({"bias__rule_outcome": "failed"}, "bias.rule_outcome"),
        ({"overall__p": "0.105"}, "overall.p"),
        ({"exclude_s04__p": None}, "exclude_s04.p"),
    ],
)
def test_one_wrong_field_scores_12(changes: dict[str, Any], wrong: str) -> None:
    score = score_answer(_text(_answer(**changes)))
    assert score.correct == 12 and not score.parse_failure
    assert [f.path for f in score.fields if not f.correct] == [wrong]
    assert wrong in score.reason


def test_huge_integer_is_wrong_not_a_crash() -> None:
    text = _text(_answer(overall__p=123)).replace("123", "9" * 400)
    assert score_answer(text).correct == 12


def test_rules_are_labelled() -> None:
    rules = {f.path: f.rule for f in score_answer(_text(_answer())).fields}
    assert rules["overall.k"] == "exact" and rules["overall.p"] == "abs<=0.0005"
    assert rules["bias.egger_p"] == "abs<=0.000005"


def test_k_as_integral_float_is_exact() -> None:
    assert score_answer(_text(_answer(overall__k=19.0))).correct == 13


def test_missing_fields_and_sections_are_wrong_not_parse_failures() -> None:
    answer = _answer()
    del answer["bias"]
    del answer["overall"]["p"]
    answer["extra"] = {"anything": 1}
    score = score_answer(_text(answer))
    assert (score.correct, score.parse_failure) == (10, False)
    missing = [f for f in score.fields if not f.present]
    assert [f.path for f in missing] == ["overall.p", "bias.egger_p", "bias.rule_outcome"]
    assert score_answer("{}").correct == 0 and not score_answer("{}").parse_failure


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_count_as_wrong_not_parse_failure(token: str) -> None:
    text = _text(_answer(overall__estimate=123.0)).replace("123.0", token)
    score = score_answer(text)
    assert (score.correct, score.parse_failure) == (12, False)
    field = next(f for f in score.fields if f.path == "overall.estimate")
    assert not field.correct and field.got == token
    json.dumps([f.got for f in score.fields], allow_nan=False)  # stays JSON-safe


@pytest.mark.parametrize(
    "wrap",
    [
        "```json\n{}\n```",
        "```JSON\n{}\n```",
        "```\n{}\n```",
        "  \n```json\r\n{}\r\n```\n\n",
        "\n{}\n",
    ],
)
def test_one_surrounding_fence_is_stripped(wrap: str) -> None:
    score = score_answer(wrap.replace("{}", _text(_answer())))
    assert score.correct == 13, score.reason


@pytest.mark.parametrize(
    "wrap",
    [
        "Here is the answer:\n```json\n{}\n```",
        "```json\n{}\n```\nDone.",
        "```json\n```json\n{}\n```\n```",
        "```python\n{}\n```",
        "The answer is {}",
        "{} {}",
    ],
)
def test_anything_beyond_one_fence_is_a_parse_failure(wrap: str) -> None:
    score = score_answer(wrap.replace("{}", _text(_answer())))
    assert score.parse_failure and score.fields == [] and score.label == "parse failure"


@pytest.mark.parametrize(
    "raw", ["", "not json", "[1, 2]", '"text"', "42", "null", '{"overall": ', '{"a": 1, "a": 2}']
)
def test_invalid_json_or_non_object_is_a_parse_failure(raw: str) -> None:
    score = score_answer(raw)
    assert score.parse_failure and score.reason


def test_explicit_reference_is_used() -> None:
    ref = _answer(overall__k=7)
    assert score_answer(_text(ref), reference=ref).correct == 13
    assert score_answer(_text(_answer()), reference=ref).correct == 12


def _grade(answer: str | None) -> Any:
    task = Task.model_validate({"id": "answer", "prompt": "p", "grader": {"name": "x"}})
    return grade_webmcp_answer(
        GradeInput(task=task, args={}, content={}, state=None, final_answer=answer)
    )


def test_grader_outcomes() -> None:
    passed = _grade("```json\n" + _text(_answer()) + "\n```")
    assert passed.outcome == "passed" and passed.details["correct"] == 13
    assert len(passed.details["fields"]) == 13
    json.dumps(passed.details, allow_nan=False)
    failed = _grade(_text(_answer(bias__rule_outcome="passed")))
    assert failed.outcome == "failed" and failed.details["correct"] == 12
    assert "bias.rule_outcome" in failed.reason
    broken = _grade("I could not compute it.")
    assert broken.outcome == "parse_failure" and broken.details["fields"] == []
    assert _grade(None).outcome == "failed" and _grade("  ").reason == "no answer"
