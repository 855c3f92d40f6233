"""Loading experiment files: every problem in one pass, each with its line and fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench._errors import SpecError
from pairbench.spec import Experiment, Problem, check_experiment, load_experiment
from pairbench.spec._load import load_yaml_with_lines

Write = Callable[..., Path]
Registry = dict[str, set[str]]

FIVE_ERRORS = """\
id: demo
version: 1.0.0
trails: 2
order: alternate
order: randomized
budget:
  trial_timeout_s: -5
agent: {adapter: scripted}
comparisons: [[baseline, remote]]
arms:
  baseline: {tools: none}
  local: {tools: none}
tasks:
  - id: read-title
    prompt: prompts/read.md
    grader: {name: no-such-grader}
"""


def where(problems: list[Problem]) -> list[tuple[int | None, str]]:
    return [(p.line, p.yaml_path) for p in problems]


def test_valid_experiment_loads(write: Write, valid: str, registry: Registry) -> None:
    loaded = load_experiment(write(valid), registry)
    assert isinstance(loaded.experiment, Experiment)
    assert sorted(loaded.experiment.arms) == ["baseline", "local"]
    assert loaded.experiment.comparisons == [("baseline", "local")]
    assert loaded.path.name == "experiment.yaml" and loaded.path.is_absolute()
    assert loaded.root == loaded.path.parent
    assert loaded.resolve("prompts/read.md") == loaded.root / "prompts" / "read.md"
    with pytest.raises(ValueError):
        loaded.resolve("../outside.md")
    assert len(loaded.canonical_hash) == 64


def test_five_errors_in_one_pass(write: Write, registry: Registry) -> None:
    problems = check_experiment(write(FIVE_ERRORS), registry)
    assert where(problems) == [
        (3, "trails"),
        (5, "order"),
        (7, "budget.trial_timeout_s"),
        (9, "comparisons[0][1]"),
        (16, "tasks[0].grader.name"),
    ]
    trails, order, timeout, arm, grader = problems
    assert trails.message == "unknown key 'trails'"
    assert "did you mean 'trials'?" in trails.fix
    assert "duplicate key" in order.message and "line 4" in order.fix
    assert timeout.message == "must be greater than 0 (got -5)"
    assert "'remote'" in arm.message and "baseline, local" in arm.fix
    assert "'no-such-grader'" in grader.message and "tracker-answer" in grader.fix


def test_problem_is_one_line_with_its_fix(
    write: Write, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(write(FIVE_ERRORS).parent)
    problems = check_experiment("experiment.yaml", registry)
    assert str(problems[2]) == (
        "experiment.yaml:7: budget.trial_timeout_s: must be greater than 0 (got -5). "
        "Fix: set a positive number of seconds."
    )
    assert all("\n" not in str(p) for p in problems)


def test_load_raises_spec_error_with_every_problem(write: Write, registry: Registry) -> None:
    with pytest.raises(SpecError) as caught:
        load_experiment(write(FIVE_ERRORS), registry)
    assert len(caught.value.problems) == 5
    assert ":3: trails: unknown key 'trails'" in caught.value.problems[0]


def test_missing_file_is_one_clear_problem(tmp_path: Path, registry: Registry) -> None:
    with pytest.raises(SpecError) as caught:
        load_experiment(tmp_path / "nope.yaml", registry)
    [problem] = caught.value.problems
    assert "nope.yaml: cannot read it: No such file or directory" in problem


def test_empty_file_and_non_mapping(write: Write, registry: Registry) -> None:
    assert "empty" in check_experiment(write(""), registry)[0].message
    assert "mapping" in check_experiment(write("- a\n- b\n"), registry)[0].message


def test_yaml_syntax_error_has_its_line(write: Write, valid: str, registry: Registry) -> None:
    text = valid.replace("comparisons: [[baseline, local]]", "comparisons: [[baseline, local]")
    [problem] = check_experiment(write(text), registry)
    assert problem.line == 8 and problem.message.startswith("invalid YAML")
    [tab] = check_experiment(write(valid.replace("  baseline:", "\tbaseline:")), registry)
    assert tab.line == 9 and tab.fix == "indent with spaces, not tabs"
    [listed] = check_experiment(write(valid.replace("{tools: none}", "{tools: [a]}")), registry)
    assert listed.message == "must be 'none' or a mapping"


def test_load_yaml_with_lines_maps_paths(write: Write, valid: str) -> None:
    data, lines = load_yaml_with_lines(write(valid))
    assert data["arms"]["local"]["tools"]["mcp"]["tracker"]["transport"] == "stdio"
    assert type(data["budget"]["trial_timeout_s"]) is int  # plain types, not ruamel's
    assert lines.line("arms.local.tools.mcp.tracker") == 13
    assert lines.line("tasks[0].grader.name") == 19
    assert lines.line("tasks[0]") == 15
    assert lines.line("tasks[0].no.such.key") == 15  # the nearest ancestor
    with pytest.raises(SpecError):
        load_yaml_with_lines(write("a: 1\na: 2\n"))


def test_every_duplicate_key_is_reported(write: Write, valid: str, registry: Registry) -> None:
    text = valid.replace("trials: 2\n", "trials: 2\ntrials: 3\n").replace(
        "    fixture: tracker\n", "    fixture: tracker\n    fixture: tracker\n"
    )
    assert where(check_experiment(write(text), registry)) == [
        (5, "trials"),
        (20, "tasks[0].fixture"),
    ]


@pytest.mark.parametrize(
    ("old", "new", "path", "words"),
    [
        ("{adapter: scripted}", "{adapter: scriptd}", "agent.adapter", "did you mean 'scripted'"),
        (
            "  baseline: {tools: none}",
            "  baseline: {agent: {adapter: nope}}",
            "arms.baseline.agent.adapter",
            "unknown agent adapter 'nope'",
        ),
        ("fixture: tracker", "fixture: trackr", "tasks[0].fixture", "unknown fixture 'trackr'"),
        ("prompts/read.md", "prompts/gone.md", "tasks[0].prompt", "does not exist"),
        ("plan: plans/read.yaml", "plan: ../plans/read.yaml", "tasks[0].plan", "outside"),
        ("protocol: protocol.md", "protocol: /etc/passwd", "protocol", "absolute"),
        ("id: read-title", "id: ../x", "tasks[0].id", "not a safe id"),
        (
            "  baseline: {tools: none}",
            "  baseline: {tools: none}\n  Has Space: {tools: none}",
            "arms.Has Space",
            "'Has Space' is not a safe id",
        ),
        ("[[baseline, local]]", "[[local, local]]", "comparisons[0]", "with itself"),
        (
            "[[baseline, local]]",
            "[[baseline, local], [local, baseline]]",
            "comparisons[1]",
            "listed twice",
        ),
        ("{tools: none}", "{tools: nne}", "arms.baseline.tools", "'none' or a mapping (got 'nne')"),
        (
            "[python3, -m, tracker_server]",
            "python3",
            "arms.local.tools.mcp.tracker.command",
            "(got 'python3')",
        ),
        (
            "{transport: stdio, command: [python3, -m, tracker_server]}",
            "{transport: stdio}",
            "arms.local.tools.mcp.tracker",
            "needs 'command'",
        ),
        ("trials: 2", "trials: 0", "trials", "must be at least 1 (got 0)"),
        ("version: 1.0.0", "version: 1.0", "version", "quote it"),
        ("trials: 2", "zzz: 2", "zzz", "the keys allowed here are"),
        ("{adapter: scripted}", "{adaptr: scripted}", "agent.adaptr", "did you mean 'adapter'?"),
        (
            "    grader: {name: tracker-answer, args: {field: title}}\n",
            "",
            "tasks[0].grader",
            "required key 'grader' is missing",
        ),
    ],
)
def test_each_check_fires_on_its_own(
    write: Write, valid: str, registry: Registry, old: str, new: str, path: str, words: str
) -> None:
    assert old in valid
    problems = check_experiment(write(valid.replace(old, new, 1)), registry)
    assert len(problems) == 1, [str(p) for p in problems]
    assert problems[0].yaml_path == path
    assert words in str(problems[0])
    assert problems[0].line is not None and problems[0].fix


def test_duplicate_task_ids(write: Write, valid: str, registry: Registry) -> None:
    task = valid[valid.index("  - id: read-title") :]
    [problem] = check_experiment(write(valid + task), registry)
    assert (problem.line, problem.yaml_path) == (21, "tasks[1].id")
    assert "already used by tasks[0]" in problem.message


def test_fewer_than_two_arms(write: Write, valid: str, registry: Registry) -> None:
    text = valid.replace("comparisons: [[baseline, local]]\n", "")
    text = text[: text.index("  local:")] + text[text.index("tasks:") :]
    [problem] = check_experiment(write(text), registry)
    assert (problem.line, problem.yaml_path) == (7, "arms")
    assert "at least 2 arms (found 1)" in problem.message


def test_registry_groups_left_out_are_not_checked(write: Write, valid: str) -> None:
    text = valid.replace("fixture: tracker", "fixture: anything")
    registry = {"agents": {"scripted"}, "graders": {"tracker-answer"}}
    assert check_experiment(write(text), registry) == []


def test_line_lookup_of_an_odd_path_terminates() -> None:
    from pairbench.spec._yaml import LineMap

    lines = LineMap({"arms": 3, "arms.a": 4})
    assert lines.line("arms.a.tools[") == 4
    assert lines.line("[") is None
    assert lines.line("tasks[2].grader") is None


def test_a_descriptive_benchmark_may_have_one_arm(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("Go.\n", encoding="utf-8")
    path = tmp_path / "experiment.yaml"
    body = (
        "id: one\nversion: '1'\nagent: {adapter: scripted}\narms: {a: {}}\n"
        "tasks:\n  - {id: t, prompt: p.md, grader: {name: exact-answer, args: {expect: x}}}\n"
    )
    path.write_text(body, encoding="utf-8")
    with pytest.raises(SpecError, match="declare `descriptive: true`"):
        load_experiment(path)
    path.write_text("descriptive: true\n" + body, encoding="utf-8")
    assert list(load_experiment(path).experiment.arms) == ["a"]
