"""The grader plugin docs/plugins.md shows: registered by its entry point, it grades, and
``check`` enforces its ``args_model``. The docs quote its files, so they cannot drift."""

from __future__ import annotations

import sys
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from pairbench import GradeInput, check_experiment
from pairbench import _registry as registry
from pairbench.spec import Task
from pairbench.studies.mcp_transports import TRACKER_FIXTURE

ROOT = Path(__file__).parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "plugin_grader"
MODULE = EXAMPLE / "pairbench_short_answer.py"
EXPERIMENT = """\
id: plugin-grader
version: "1"
agent: {{adapter: scripted}}
arms: {{a: {{}}, b: {{}}}}
tasks:
  - id: title
    prompt: p.md
    fixture: tracker
    grader: {{name: short-answer, args: {args}}}
"""


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The example registered as its pyproject.toml declares (as ``pip install`` would)."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    declared = project["project"]["entry-points"]["pairbench.graders"]
    ours = {name: EntryPoint(name, value, "pairbench.graders") for name, value in declared.items()}
    real = registry._entry_points

    def entry_points(group: registry.Group) -> dict[str, EntryPoint]:
        found = dict(real(group))
        return {**found, **ours} if group == "graders" else found

    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.delitem(sys.modules, "pairbench_short_answer", raising=False)
    monkeypatch.setattr(registry, "_entry_points", entry_points)
    return registry.load("graders", "short-answer")


def test_the_docs_quote_the_example_files_verbatim() -> None:
    docs = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert f"```python\n{MODULE.read_text(encoding='utf-8')}```" in docs
    assert f"```toml\n{(EXAMPLE / 'pyproject.toml').read_text(encoding='utf-8')}```" in docs


def test_the_example_grader_grades_from_the_seeded_content(installed: Any) -> None:
    content = TRACKER_FIXTURE.content(7)
    title = content["target"]["issue_title"]
    args = {"expect_path": "target.issue_title", "max_words": 12}
    task = Task(id="t", prompt="p.md", grader={"name": "short-answer", "args": args})

    def grade(answer: str | None) -> tuple[str, str]:
        result = installed(GradeInput(task, args, content, None, answer))
        return result.outcome, result.reason

    assert grade(f"It is {title.upper()}.") == ("passed", f"names {title!r}")
    assert grade("I do not know.") == (
        "failed",
        f"expected the answer to name {title!r}; found 'I do not know.'",
    )
    assert grade(" ".join(["word"] * 13)) == ("failed", "expected at most 12 words; found 13")
    assert grade(None) == ("failed", "no answer")


def test_check_enforces_the_example_args_model(installed: Any, tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("What is the title of the target issue?\n", encoding="utf-8")
    path = tmp_path / "experiment.yaml"
    path.write_text(EXPERIMENT.format(args="{expect_path: target.issue_title}"), "utf-8")
    assert check_experiment(path) == []
    path.write_text(EXPERIMENT.format(args="{expect_path: x, max_word: 5}"), "utf-8")
    (typo,) = check_experiment(path)
    assert str(typo) == (
        f"{path}:9: tasks[0].grader.args.max_word: unknown argument 'max_word' of grader "
        "'short-answer'. Fix: did you mean 'max_words'? The arguments short-answer takes: "
        "expect_path, max_words."
    )
    path.write_text(EXPERIMENT.format(args="{max_words: many}"), "utf-8")
    problems = sorted(str(p) for p in check_experiment(path))
    assert problems == [
        f"{path}:9: tasks[0].grader.args.expect_path: grader 'short-answer' needs the argument "
        "'expect_path'. Fix: add 'expect_path' (expect_path: A dotted path into the trial's "
        "seeded content (e.g. target.issue_title)).",
        f"{path}:9: tasks[0].grader.args.max_words: should be a valid integer, unable to parse "
        "string as an integer (got 'many'). Fix: use a whole number (max_words: The most words "
        "the answer may have).",
    ]
