"""A task's grader args, checked against the grader's declared model: one problem each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pairbench import SpecError
from pairbench._registry import load as registry_load
from pairbench.grading import GraderArgs
from pairbench.spec import Problem, check_experiment, load_experiment
from pairbench.spec import _grader_args as grader_args

Write = Callable[..., Path]
GRADERS = {"tracker-answer", "exact-answer", "contains", "regex", "json-path", "number"}

# Three tasks; the third's grader is written in block style so that each argument has a
# line of its own (line 26 is the first argument's).
EXPERIMENT = """\
id: demo
version: 1.0.0
protocol: protocol.md
trials: 2
agent: {{adapter: scripted}}
comparisons: [[baseline, local]]
arms:
  baseline: {{tools: none}}
  local: {{tools: none}}
tasks:
  - id: first
    prompt: prompts/read.md
    grader: {{name: exact-answer, args: {{expect: PASS}}}}
  - id: second
    prompt: prompts/read.md
    grader: {{name: tracker-answer, args: {{anything: goes}}}}
  - id: third
    prompt: prompts/read.md
    grader:
      name: {name}
      args:
{args}
"""
ARGS_LINE = 22


@pytest.fixture
def registry() -> dict[str, set[str]]:
    return {"agents": {"scripted"}, "graders": set(GRADERS), "fixtures": {"tracker"}}


def _experiment(name: str, args: dict[str, Any]) -> str:
    lines = [f"        {key}: {value}" for key, value in args.items()] or ["        {}"]
    return EXPERIMENT.format(name=name, args="\n".join(lines))


def _one(write: Write, registry: dict[str, set[str]], name: str, args: dict[str, Any]) -> Problem:
    problems = check_experiment(write(_experiment(name, args)), registry)
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("exact-answer", {"expect_path": "fixture.target.title"}),
        ("contains", {"expect": "Fix login", "none_of": "[sorry, x]", "case_sensitive": "true"}),
        ("regex", {"pattern": r"'#(?P<n>\d+)'", "group": "n", "expect": 7, "flags": "[dotall]"}),
        ("json-path", {"path": '"items[0].name"', "expect": "{a: [1, 2]}"}),
        ("number", {"expect": '"1,234"', "pick": "last", "abs_tol": 0.5, "rel_tol": 0.01}),
    ],
)
def test_valid_args_have_no_problem_and_load(
    write: Write, registry: dict[str, set[str]], name: str, args: dict[str, Any]
) -> None:
    path = write(_experiment(name, args))
    assert check_experiment(path, registry) == []
    loaded = load_experiment(path, registry)
    assert loaded.experiment.tasks[2].grader.name == name


def test_a_typo_in_an_arg_key_names_its_line_path_and_the_known_keys(
    write: Write, registry: dict[str, set[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(write("").parent)
    write(_experiment("exact-answer", {"expect_pth": "x"}))
    (problem,) = check_experiment("experiment.yaml", registry)
    assert str(problem) == (
        f"experiment.yaml:{ARGS_LINE}: tasks[2].grader.args.expect_pth: unknown argument "
        "'expect_pth' of grader 'exact-answer'. Fix: did you mean 'expect_path'? The arguments "
        "exact-answer takes: expect, expect_path."
    )


def test_an_unknown_key_without_a_close_match_lists_the_keys(
    write: Write, registry: dict[str, set[str]]
) -> None:
    problem = _one(write, registry, "number", {"expect": 3, "zzz": 1})
    assert problem.line == ARGS_LINE + 1 and problem.yaml_path == "tasks[2].grader.args.zzz"
    assert problem.fix == (
        "remove it; the arguments number takes: abs_tol, expect, expect_path, pick, rel_tol"
    )


def test_a_bad_regex_is_a_problem_at_the_pattern(
    write: Write, registry: dict[str, set[str]]
) -> None:
    problem = _one(write, registry, "regex", {"pattern": "'issue #(\\d+'"})
    assert (problem.line, problem.yaml_path) == (ARGS_LINE, "tasks[2].grader.args.pattern")
    assert problem.message == (
        r"'issue #(\d+' is not a valid regular expression (missing ), unterminated subpattern "
        "at position 7)"
    )
    assert problem.fix == "use Python's re syntax, in single quotes in YAML"


def test_a_regex_group_the_pattern_lacks(write: Write, registry: dict[str, set[str]]) -> None:
    problem = _one(write, registry, "regex", {"pattern": "'(a)'", "group": 2, "expect": "a"})
    assert problem.yaml_path == "tasks[2].grader.args.group"
    assert "group 2 is not in the pattern, which has 1 group(s)" in problem.message
    assert problem.fix == "use a number from 0 to 1 or a group name (names: none)"


def test_a_wrong_type_names_the_type_wanted(write: Write, registry: dict[str, set[str]]) -> None:
    problem = _one(write, registry, "number", {"expect": 3, "abs_tol": "lots"})
    assert (problem.line, problem.yaml_path) == (ARGS_LINE + 1, "tasks[2].grader.args.abs_tol")
    assert problem.message == (
        "should be a valid number, unable to parse string as a number (got 'lots')"
    )
    assert problem.fix.startswith("use a number (abs_tol: The largest difference accepted")
    flag = _one(write, registry, "regex", {"pattern": "a", "flags": "[ignorecas]"})
    assert flag.yaml_path == "tasks[2].grader.args.flags[0]"
    assert "'ignorecase'" in flag.fix
    listed = _one(write, registry, "contains", {"all_of": "[a, {b: 1}]"})
    assert listed.yaml_path == "tasks[2].grader.args.all_of[1]"
    assert listed.message == "must be text, a number or true/false (got a dict)"


def test_both_expect_and_expect_path_is_one_problem_at_the_args(
    write: Write, registry: dict[str, set[str]]
) -> None:
    problem = _one(write, registry, "exact-answer", {"expect": "x", "expect_path": "target.x"})
    assert (problem.line, problem.yaml_path) == (ARGS_LINE - 1, "tasks[2].grader.args")
    assert problem.message == "both 'expect' and 'expect_path' are set"
    assert problem.fix == (
        "use only one (expect for a literal, expect_path for a value of the fixture content)"
    )


def test_neither_is_one_problem_too(write: Write, registry: dict[str, set[str]]) -> None:
    problem = _one(write, registry, "number", {"pick": "last"})
    assert problem.message == "neither 'expect' nor 'expect_path' is set"
    text = _experiment("exact-answer", {}).replace("      args:\n        {}\n", "")
    (bare,) = check_experiment(write(text), registry)
    assert (bare.line, bare.yaml_path) == (19, "tasks[2].grader.args")  # no args: the grader


def test_a_bad_path_syntax_is_refused(write: Write, registry: dict[str, set[str]]) -> None:
    problem = _one(write, registry, "json-path", {"path": '"items[x"', "expect": 1})
    assert problem.yaml_path == "tasks[2].grader.args.path"
    assert problem.message == "path 'items[x' is not valid at character 6"
    path = _one(write, registry, "exact-answer", {"expect_path": '"target..title"'})
    assert path.message == "expect_path 'target..title' is not a dotted path"


def test_load_refuses_the_same_problems(write: Write, registry: dict[str, set[str]]) -> None:
    with pytest.raises(SpecError) as caught:
        load_experiment(write(_experiment("contains", {"expect": "x", "all": "[y]"})), registry)
    (problem,) = caught.value.problems
    assert f":{ARGS_LINE + 1}: tasks[2].grader.args.all: unknown argument 'all'" in problem
    assert "did you mean 'all_of'?" in problem


def test_the_installed_registry_is_used_by_default(write: Write) -> None:
    (problem,) = check_experiment(write(_experiment("number", {"expct": 3})))
    assert problem.yaml_path == "tasks[2].grader.args.expct"


def test_a_grader_the_caller_does_not_register_is_not_checked(write: Write) -> None:
    # The caller's registry decides what exists: a name it lacks is the name check's problem,
    # and one only it knows (not installed) has no model to check against.
    text = _experiment("number", {"expct": 3})
    without_number = {"graders": {"tracker-answer", "exact-answer"}}
    (problem,) = check_experiment(write(text), without_number)
    assert problem.yaml_path == "tasks[2].grader.name"
    assert problem.message == "unknown grader 'number'"
    not_installed = {"graders": {"exact-answer", "tracker-answer", "mine"}}
    assert check_experiment(write(_experiment("mine", {"whatever": 1})), not_installed) == []


def test_a_grader_that_fails_to_import_is_a_problem_naming_it(
    write: Write, registry: dict[str, set[str]], monkeypatch: pytest.MonkeyPatch
) -> None:

    def load(group: Any, name: str) -> Any:
        if name == "regex":
            raise ImportError("No module named 'pb_broken'")
        return registry_load(group, name)

    monkeypatch.setattr(grader_args, "load", load)
    problem = _one(write, registry, "regex", {"pattern": "a"})
    assert problem.yaml_path == "tasks[2].grader.name"
    assert problem.message == (
        "grader 'regex' is registered but cannot be imported (ImportError: No module named "
        "'pb_broken')"
    )


def test_a_plugin_model_that_raises_is_a_problem_not_a_crash(
    write: Write, registry: dict[str, set[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Odd(GraderArgs):
        value: int = 0

        def model_post_init(self, context: Any, /) -> None:
            raise TypeError("boom")

    def grader() -> None: ...

    grader.args_model = Odd  # type: ignore[attr-defined]
    monkeypatch.setattr(
        grader_args,
        "load",
        lambda group, name: grader if name == "contains" else registry_load(group, name),
    )
    problem = _one(write, registry, "contains", {"value": 1})
    assert problem.yaml_path == "tasks[2].grader.args"
    assert problem.message == "grader 'contains' could not check its args (TypeError: boom)"


def test_a_grader_without_a_model_takes_any_args(
    write: Write, registry: dict[str, set[str]]
) -> None:
    # tracker-answer (the second task) declares no model: its args are its own business.
    assert check_experiment(write(_experiment("tracker-answer", {"x": 1})), registry) == []
