"""The generic graders: each passes and fails with a reason naming what was expected and found."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pairbench import Grade, GradeInput, SpecError
from pairbench._registry import load
from pairbench.grading import (
    contains_answer,
    exact_answer,
    json_path_answer,
    number_answer,
    regex_answer,
)
from pairbench.grading._protocol import Grader
from pairbench.spec import Task
from pairbench.spec._grader_args import args_model, field_doc

GRADERS: dict[str, Grader] = {
    "exact-answer": exact_answer,
    "contains": contains_answer,
    "regex": regex_answer,
    "json-path": json_path_answer,
    "number": number_answer,
}
CONTENT = {"target": {"title": "Fix login", "count": 1234, "text_count": "1,234", "word": "x"}}


def grade(grader: Grader, args: dict[str, Any], answer: str | None, **content: Any) -> Grade:
    name = next(n for n, g in GRADERS.items() if g is grader)
    task = Task(id="t", prompt="p.md", grader={"name": name, "args": args})
    return grader(GradeInput(task, args, content or CONTENT, None, answer))


def passes(grader: Grader, args: dict[str, Any], answer: str) -> str:
    result = grade(grader, args, answer)
    assert result.outcome == "passed", result.reason
    return result.reason


def fails(grader: Grader, args: dict[str, Any], answer: str | None) -> str:
    result = grade(grader, args, answer)
    assert result.outcome == "failed", result.reason
    return result.reason


# -- every grader ---------------------------------------------------------------------------

VALID_ARGS: dict[str, dict[str, Any]] = {
    "exact-answer": {"expect": "x"},
    "contains": {"expect": "x"},
    "regex": {"pattern": "x"},
    "json-path": {"path": "a", "expect": 1},
    "number": {"expect": 1},
}


@pytest.mark.parametrize("name", sorted(GRADERS))
def test_each_grader_is_registered_with_a_strict_documented_args_model(name: str) -> None:
    grader = load("graders", name)
    assert grader is GRADERS[name]
    model = args_model(grader)
    assert model is not None and issubclass(model, BaseModel)
    assert model.model_config.get("extra") == "forbid" and model.model_config.get("frozen")
    # As check quotes it in a fix: the field's docstring, read from the source.
    undocumented = [f for f in model.model_fields if not field_doc(model, f)]
    assert undocumented == [], f"{name}: fields without a docstring"


@pytest.mark.parametrize("name", sorted(GRADERS))
@pytest.mark.parametrize("answer", [None, "", "  \n\t "])
def test_a_missing_answer_fails_with_no_answer(name: str, answer: str | None) -> None:
    assert fails(GRADERS[name], VALID_ARGS[name], answer) == "no answer"


@pytest.mark.parametrize("name", sorted(GRADERS))
def test_arguments_never_checked_are_refused_by_name_when_grading(name: str) -> None:
    with pytest.raises(SpecError, match=rf"grader\.args\.expectt: unknown argument .* '{name}'"):
        grade(GRADERS[name], {**VALID_ARGS[name], "expectt": 1}, "x")


@pytest.mark.parametrize("name", sorted(set(GRADERS) - {"regex"}))
def test_an_expect_path_naming_nothing_fails_naming_the_path_and_the_keys(name: str) -> None:
    args = {k: v for k, v in VALID_ARGS[name].items() if k != "expect"}
    reason = fails(GRADERS[name], {**args, "expect_path": "fixture.target.titel"}, "x")
    assert reason == (
        "expect_path 'fixture.target.titel' names nothing in the fixture content (its keys: target)"
    )


def test_no_reason_of_a_failure_says_expected_none() -> None:
    answers = ["", "Nothing to see", '{"a": null}', "null", "None", "0"]
    for name, grader in GRADERS.items():
        for answer in answers:
            result = grade(grader, VALID_ARGS[name], answer)
            assert "expected None" not in result.reason, (name, answer, result.reason)


# -- exact-answer ---------------------------------------------------------------------------


def test_exact_answer_names_what_it_expected_and_found() -> None:
    assert passes(exact_answer, {"expect": "PASS"}, "  pass\n") == "answer matches"
    assert fails(exact_answer, {"expect": "PASS"}, "FAIL") == "expected 'PASS'; found 'FAIL'"
    args = {"expect_path": "target.title"}
    assert passes(exact_answer, args, "fix  LOGIN") == "answer matches"
    reason = fails(exact_answer, {"expect_path": "fixture.target.title"}, "Fix logout")
    assert reason == "expected 'Fix login' (fixture.target.title); found 'Fix logout'"
    assert passes(exact_answer, {"expect": 18}, "18") == "answer matches"


# -- contains -------------------------------------------------------------------------------


def test_contains_finds_text_inside_a_markdown_answer() -> None:
    answer = "## Result\n\nThe issue is **Fix   login** (see [the tracker](http://x/1))."
    assert passes(contains_answer, {"expect": "fix login"}, answer) == "answer contains 'fix login'"
    assert passes(contains_answer, {"expect": "the tracker"}, answer)
    reason = passes(contains_answer, {"expect_path": "fixture.target.title"}, answer)
    assert reason == "answer contains 'Fix login' (fixture.target.title)"


def test_contains_fails_naming_the_text_and_an_excerpt_of_the_answer() -> None:
    reason = fails(contains_answer, {"expect": "Fix login"}, "The title is Fix logout.")
    assert reason == "expected the answer to contain 'Fix login'; found 'The title is Fix logout.'"
    long = "word " * 40 + "end"
    reason = fails(contains_answer, {"expect": "missing"}, long)
    assert reason.endswith("…'") and len(reason) < 120


def test_contains_case_sensitive_all_of_and_none_of() -> None:
    assert fails(contains_answer, {"expect": "Fix", "case_sensitive": True}, "fix it")
    assert passes(contains_answer, {"expect": "Fix", "case_sensitive": True}, "Fix it")
    reason = fails(contains_answer, {"expect": "a", "all_of": ["b", "c"]}, "a and b")
    assert reason == (
        "expected the answer to contain all of 'a', 'b', 'c' (missing 'c'); found 'a and b'"
    )
    assert passes(contains_answer, {"all_of": ["b", 42]}, "b is 42") == "answer contains 'b', '42'"
    reason = fails(contains_answer, {"expect": "done", "none_of": ["error"]}, "done, no ERROR")
    assert reason == "expected the answer not to contain 'error'; found it in 'done, no ERROR'"
    assert passes(contains_answer, {"none_of": ["error"]}, "all good") == (
        "answer contains none of the texts of none_of"
    )


# -- regex ----------------------------------------------------------------------------------


def test_regex_matches_anywhere_or_wholly() -> None:
    assert passes(regex_answer, {"pattern": r"#\d+"}, "See #12.") == r"answer matches /#\d+/: '#12'"
    reason = fails(regex_answer, {"pattern": r"#\d+"}, "See issue twelve.")
    assert reason == r"expected a match of /#\d+/; found 'See issue twelve.'"
    args = {"pattern": "yes", "fullmatch": True, "flags": ["ignorecase"]}
    assert passes(regex_answer, args, "  YES\n")
    reason = fails(regex_answer, {**args, "flags": []}, "yes please")
    assert reason == "expected the whole answer to match /yes/; found 'yes please'"


def test_regex_flags_change_what_matches() -> None:
    assert fails(regex_answer, {"pattern": "^total"}, "Sum:\ntotal 3")
    assert passes(regex_answer, {"pattern": "^total", "flags": ["multiline"]}, "Sum:\ntotal 3")
    assert fails(regex_answer, {"pattern": "a.b"}, "a\nb")
    assert passes(regex_answer, {"pattern": "a.b", "flags": ["dotall"]}, "a\nb")


def test_regex_compares_a_captured_group() -> None:
    args: dict[str, Any] = {"pattern": r"issue #(\d+)", "group": 1, "expect": 7}
    assert passes(regex_answer, args, "It is issue #7.") == r"group 1 of /issue #(\d+)/ is '7'"
    reason = fails(regex_answer, args, "It is issue #3, not #7.")
    assert reason == (
        r"expected group 1 of /issue #(\d+)/ to be '7'; found '3' in 'It is issue #3, not #7.'"
    )
    named = {"pattern": r"title: (?P<t>.+)", "group": "t", "expect_path": "target.title"}
    assert passes(regex_answer, named, "title: Fix   login")  # whitespace runs aside
    assert fails(regex_answer, named, "title: fix login")  # case counts without ignorecase
    assert passes(regex_answer, {**named, "flags": ["ignorecase"]}, "title: fix login")
    reason = fails(regex_answer, {"pattern": "(a)|(b)", "group": 2, "expect": "b"}, "a")
    assert reason == "expected group 2 of /(a)|(b)/ to be 'b'; it took no part in the match 'a'"
    whole = {"pattern": r"\d+", "expect": "12"}  # no group: the whole match
    assert passes(regex_answer, whole, "got 12") == r"group 0 of /\d+/ is '12'"


# -- json-path ------------------------------------------------------------------------------


def test_json_path_reads_the_whole_answer_a_fenced_block_or_the_first_object() -> None:
    args = {"path": "items[0].name", "expect": "Ada"}
    assert passes(json_path_answer, args, '{"items": [{"name": "Ada"}]}') == (
        'items[0].name is "Ada"'
    )
    fenced = 'Here you go:\n\n```json\n{"items": [{"name": "ada"}]}\n```\nAnything else?'
    assert passes(json_path_answer, args, fenced)
    inline = 'I found {"items": [{"name": "Ada", "id": 3}]} in the store.'
    assert passes(json_path_answer, args, inline)
    assert passes(json_path_answer, {"path": "$[1]", "expect": True}, "[1, true]")
    quoted = {"path": '$.meta["content-type"]', "expect": "x"}
    assert passes(json_path_answer, quoted, '{"meta": {"content-type": "x"}}')


def test_json_path_compares_as_json() -> None:
    assert passes(json_path_answer, {"path": "n", "expect": 3}, '{"n": 3.0}')
    reason = fails(json_path_answer, {"path": "n", "expect": 3}, '{"n": "3"}')
    assert reason == 'expected 3 at n; found "3" (text) in the answer'
    reason = fails(json_path_answer, {"path": "ok", "expect": 1}, '{"ok": true}')
    assert reason == "expected 1 at ok; found true (true/false) in the answer"
    assert passes(json_path_answer, {"path": "v", "expect": None}, '{"v": null}')
    whole = {"path": "$", "expect": {"a": [1, "X"]}}
    assert passes(json_path_answer, whole, '{"a": [1, "x"]}')
    assert fails(json_path_answer, {**whole, "case_sensitive": True}, '{"a": [1, "x"]}')
    args = {"path": "count", "expect_path": "target.count"}
    reason = fails(json_path_answer, args, '{"count": 12}')
    assert reason == "expected 1234 (target.count) at count; found 12 (a number) in the answer"


def test_json_path_names_where_the_path_stops() -> None:
    args = {"path": "items[1].name", "expect": "Bo"}
    reason = fails(json_path_answer, args, '{"items": [{"name": "Ada"}]}')
    assert reason == (
        'expected "Bo" at items[1].name; the answer has no items[1] (items is a list of 1)'
    )
    reason = fails(json_path_answer, {"path": "a.b", "expect": 1}, '{"a": {"c": 1, "d": 2}}')
    assert reason.endswith("has no a.b (a is an object with keys c, d)")


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("I could not find it.", "no JSON object or array in the answer"),
        ("{'a': 1}", "no JSON object or array in the answer"),
        ('```json\n{"a": 1,}\n```', "its json block does not parse (Expecting property name"),
        ('{"a": NaN}', "no JSON object or array in the answer"),
    ],
)
def test_an_answer_without_json_is_a_parse_failure_naming_why(answer: str, why: str) -> None:
    result = grade(json_path_answer, {"path": "a", "expect": 1}, answer)
    assert result.outcome == "parse_failure"
    assert result.reason.startswith(f"expected 1 at a; {why}"), result.reason


# -- number ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expect"),
    [
        ("There are 1,234 open issues.", 1234),
        ("About **1,234,567.5** dollars", 1234567.5),
        ("The change is -3.5 degrees", -3.5),
        ("The change is −3.5 degrees", -3.5),  # a Unicode minus sign
        ("It was .5 of them", 0.5),
        ("1e3 records", 1000),
        ("Issue-7 is open", 7),  # a hyphen inside a word is no minus sign
        ("1. Open issues: 4\n2. Closed: 9", 4),  # a numbered list's numbers are not read
        ("42. That is all.", 42),  # one numbered line is an answer, not a list
        ("`12`", 12),
    ],
)
def test_number_reads_the_first_number(answer: str, expect: float) -> None:
    passes(number_answer, {"expect": expect}, answer)


def test_number_pick_last_and_only() -> None:
    assert passes(number_answer, {"expect": 7, "pick": "last"}, "Of 3 candidates, 7")
    assert fails(number_answer, {"expect": 7}, "Of 3 candidates, 7") == (
        "expected 7; found 3 in 'Of 3 candidates, 7'"
    )
    assert passes(number_answer, {"expect": 7, "pick": "only"}, "7, I'm sure: 7.")
    reason = fails(number_answer, {"expect": 7, "pick": "only"}, "3 or 7")
    assert reason == "expected 7 as the only number; found several (3, 7) in '3 or 7'"


def test_number_tolerances_include_their_boundary_exactly() -> None:
    assert passes(number_answer, {"expect": 1.0, "abs_tol": 0.1}, "1.1") == (
        "found 1.1 (expected 1 ± 0.1)"
    )  # 1.1 - 1.0 > 0.1 in binary floating point; the grader computes in decimal
    assert passes(number_answer, {"expect": 1.0, "abs_tol": 0.1}, "0.9")
    assert fails(number_answer, {"expect": 1.0, "abs_tol": 0.1}, "1.1000001") == (
        "expected 1 ± 0.1; found 1.1000001 in '1.1000001'"
    )
    assert passes(number_answer, {"expect": 200, "rel_tol": 0.01}, "202")
    assert fails(number_answer, {"expect": 200, "rel_tol": 0.01}, "202.01")
    # Both given: the wider one wins (0.5 here, 1% of 20 being 0.2).
    assert passes(number_answer, {"expect": 20, "abs_tol": 0.5, "rel_tol": 0.01}, "20.5")
    assert fails(number_answer, {"expect": 3}, "3.0001")


def test_number_expected_from_the_content_and_a_missing_number() -> None:
    assert passes(number_answer, {"expect_path": "target.count"}, "1234") == (
        "found 1234 (expected 1234 (target.count))"
    )
    assert passes(number_answer, {"expect_path": "target.text_count"}, "1234")
    reason = fails(number_answer, {"expect_path": "target.title"}, "5")
    assert reason == "expect_path 'target.title' is 'Fix login', which is not a number"
    result = grade(number_answer, {"expect": 5}, "five, I think")
    assert result.outcome == "parse_failure"
    assert result.reason == "expected 5; no number in the answer: 'five, I think'"
    assert grade(number_answer, {"expect": "1,234"}, "1234").outcome == "passed"


def test_number_details_keep_expected_and_found_exactly() -> None:
    result = grade(number_answer, {"expect": 0.1}, "0.30")
    assert result.details == {"expected": "0.1", "found": "0.3"}


# -- the docs -------------------------------------------------------------------------------


def test_every_argument_of_every_grader_is_in_the_experiment_docs() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "experiment.md").read_text(encoding="utf-8")
    section = docs[docs.index("## Graders") :]
    section = section[: section.index("\n## ", 4)]
    for name, grader in GRADERS.items():
        assert f"`{name}`" in section, name
        model = args_model(grader)
        assert model is not None
        for field in model.model_fields:
            assert re.search(rf"`{field}\b", section), f"{name}: {field}"
