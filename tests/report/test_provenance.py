"""Pre-registration facts and manual review reach every report of a run."""

from __future__ import annotations

import json
from pathlib import Path

from pairbench import start_run, write_report

AGENT = "import sys; sys.stdin.read(); print('ok')"


def _run(tmp_path: Path) -> Path:
    (tmp_path / "p.md").write_text("Answer.\n", encoding="utf-8")
    (tmp_path / "experiment.yaml").write_text(
        f"""id: reviewed
version: "1"
trials: 2
agent: {{adapter: command, settings: {{command: [python3, -c, "{AGENT}"]}}}}
arms: {{a: {{}}, b: {{}}}}
tasks:
  - {{id: t, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}
""",
        encoding="utf-8",
    )
    return start_run(tmp_path / "experiment.yaml", tmp_path / "runs", run_seed=1).run_dir


def test_manual_review_is_shown_beside_the_machine_score_and_never_changes_it(
    tmp_path: Path,
) -> None:
    run_dir = _run(tmp_path)
    before = json.loads((write_report(run_dir).summary).read_text())
    (run_dir / "manual_review.json").write_text(
        json.dumps(
            {
                "reviews": [
                    {
                        "arm": "a",
                        "task": "t",
                        "trial": 0,
                        "verdict": "should fail",
                        "note": "<b>answer copied</b>",
                        "reviewer": "rk",
                    }
                ]
            }
        )
    )
    paths = write_report(run_dir)
    after = json.loads(paths.summary.read_text())
    assert after["manual_review"] == [
        {
            "arm": "a",
            "task": "t",
            "trial": 0,
            "machine_outcome": "passed",
            "verdict": "should fail",
            "note": "<b>answer copied</b>",
            "reviewer": "rk",
        }
    ]
    assert after["arms"] == before["arms"] and after["pairs"] == before["pairs"]
    html = paths.html.read_text()
    assert "Manual review" in html and "&lt;b&gt;answer copied&lt;/b&gt;" in html
    assert "never changes it" in paths.markdown.read_text()


def test_accepted_harness_change_and_lock_state_are_in_the_report(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    info = json.loads((run_dir / "run.json").read_text())
    assert info["lock_verified"] is False  # no experiment.lock.json was frozen
    info["accepted_harness_change"] = {"expected": "0.0.1 abc", "found": "0.1.0 def"}
    (run_dir / "run.json").write_text(json.dumps(info))
    paths = write_report(run_dir)
    md = paths.markdown.read_text()
    assert "HARNESS CHANGE ACCEPTED" in md and "frozen 0.0.1 abc" in md
    assert "not verified" in md
    summary = json.loads(paths.summary.read_text())
    assert summary["run"]["accepted_harness_change"]["found"] == "0.1.0 def"
    assert [s["not_applicable"] for s in summary["seeding"]] == [2, 2]


def test_a_bad_manual_review_file_is_a_clear_error(tmp_path: Path) -> None:
    import pytest

    from pairbench import RunDirError

    run_dir = _run(tmp_path)
    (run_dir / "manual_review.json").write_text("{not json")
    with pytest.raises(RunDirError, match=r"manual_review\.json: not valid JSON"):
        write_report(run_dir)
