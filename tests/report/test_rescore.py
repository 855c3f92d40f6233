"""A report never re-scores in silence: after a grader's code changes, ``write_report``
refuses naming the grader and both hashes, and ``rescore=True`` writes a separately named,
bannered report beside the run's own, which stays byte for byte as it was."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from pairbench import _registry as registry
from pairbench import start_run, write_report
from pairbench.freeze import verify_run
from pairbench.freeze._code_drift import code_changes
from pairbench.report._rescore import RescoreRefused

pytestmark = pytest.mark.whole_run

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "plugin_grader"
AGENT = "import sys; sys.stdin.read(); print('ok')"


@pytest.fixture
def grader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The docs' example grader, installed from a folder of its own (as pip would)."""
    folder = tmp_path / "plugin"
    folder.mkdir()
    module = folder / "pairbench_short_answer.py"
    shutil.copy(EXAMPLE / "pairbench_short_answer.py", module)
    ours = EntryPoint("short-answer", "pairbench_short_answer:short_answer", "pairbench.graders")
    real = registry._entry_points

    def entry_points(group: registry.Group) -> dict[str, EntryPoint]:
        found = dict(real(group))
        return {**found, "short-answer": ours} if group == "graders" else found

    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(__import__("sys").modules, "pairbench_short_answer", raising=False)
    monkeypatch.setattr(registry, "_entry_points", entry_points)
    yield module


def test_a_changed_grader_refuses_the_report_and_rescore_writes_a_bannered_copy(
    tmp_path: Path, grader: Path
) -> None:
    (tmp_path / "p.md").write_text("Answer.\n", encoding="utf-8")
    exp = tmp_path / "experiment.yaml"
    exp.write_text(
        f"""id: rescore
version: "1"
agent: {{adapter: command, settings: {{command: [python3, -c, "{AGENT}"]}}}}
arms: {{a: {{}}, b: {{}}}}
tasks:
  - {{id: t, prompt: p.md, grader: {{name: short-answer, args: {{expect_path: x}}}}}}
""",
        encoding="utf-8",
    )
    run = start_run(exp, tmp_path / "runs", run_seed=1)
    paths = write_report(run.run_dir, bootstrap_reps=50)
    assert code_changes(run.run_dir) == []
    original = {p.name: p.read_bytes() for p in (paths.summary, paths.markdown, paths.html)}
    # The scorer changes after the run: every answer would now pass.
    text = grader.read_text(encoding="utf-8")
    grader.write_text(
        text.replace(
            'return Grade(outcome="failed", reason=f"{args',
            'return Grade(outcome="passed", reason=f"{args',
        ),
        encoding="utf-8",
    )
    (change,) = code_changes(run.run_dir)
    assert change.name == "graders:short-answer" and change.old != change.new
    with pytest.raises(RescoreRefused) as refused:
        write_report(run.run_dir, bootstrap_reps=50)
    said = str(refused.value)
    assert "graders:short-answer" in said and change.old in said and change.new in said
    assert "--rescore" in said
    assert {p.name: p.read_bytes() for p in (paths.summary, paths.markdown, paths.html)} == original
    rescored = write_report(run.run_dir, bootstrap_reps=50, rescore=True)
    assert [p.name for p in rescored] == [
        "summary-rescored.json", "report-rescored.md", "report-rescored.html"
    ]  # fmt: skip
    markdown = rescored.markdown.read_text(encoding="utf-8")
    assert markdown.startswith("> RE-SCORED: this is not the run's report.")
    assert f"graders:short-answer (python:pairbench_short_answer): {change.old}" in markdown
    assert change.new in rescored.html.read_text(encoding="utf-8")
    summary = json.loads(rescored.summary.read_text(encoding="utf-8"))
    assert summary["rescored"][0]["new"] == change.new
    # The run's own report is untouched, and the rescored copy is recorded like it.
    assert {p.name: p.read_bytes() for p in (paths.summary, paths.markdown, paths.html)} == original
    rescored.markdown.write_text(markdown.replace("RE-SCORED", "SCORED"), encoding="utf-8")
    assert any(m.path == "report-rescored.md" for m in verify_run(run.run_dir))
