"""`verify RUN_DIR`: every stored result and transcript against the journal and lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.common import cli_here
from pairbench import start_run, write_report
from pairbench.freeze import verify_run

AGENT = "import sys; sys.stdin.read(); print('ok')"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    (tmp_path / "p.md").write_text("Answer.\n", encoding="utf-8")
    (tmp_path / "experiment.yaml").write_text(
        f"""id: verified
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


def test_an_untouched_run_verifies(run_dir: Path) -> None:
    assert verify_run(run_dir) == []
    done = cli_here("verify", str(run_dir), cwd=run_dir)
    assert done.returncode == 0 and "verified" in done.stdout


@pytest.mark.parametrize("plots", [False, True])
def test_a_report_with_or_without_plots_verifies_and_an_edit_does_not(
    run_dir: Path, plots: bool
) -> None:
    write_report(run_dir, bootstrap_reps=50, plots=plots)
    assert verify_run(run_dir) == []
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert ('<figure class="plot"' in html) is plots
    (run_dir / "report.html").write_text(html.replace("</body>", "<p>x</p></body>"), "utf-8")
    assert [m.path for m in verify_run(run_dir)] == ["report.html"]


@pytest.mark.parametrize(
    ("rel", "kind"), [("results/a/t/0.json", "result"), ("transcripts/b/t/1.jsonl", "transcript")]
)
def test_an_edited_result_or_transcript_fails(run_dir: Path, rel: str, kind: str) -> None:
    target = run_dir / rel
    target.write_bytes(target.read_bytes().replace(b"ok", b"OK", 1))
    mismatches = verify_run(run_dir)
    assert [(m.kind, m.path) for m in mismatches] == [(kind, rel)]
    done = cli_here("verify", str(run_dir), cwd=run_dir)
    assert done.returncode == 1 and rel in done.stderr


def test_a_result_the_journal_never_wrote_fails(run_dir: Path) -> None:
    planted = run_dir / "results" / "a" / "t" / "9.json"
    planted.write_bytes((run_dir / "results" / "a" / "t" / "0.json").read_bytes())
    assert [m.kind for m in verify_run(run_dir)] == ["unjournaled"]


def test_a_changed_experiment_shows_against_the_run_lock(run_dir: Path) -> None:
    (run_dir.parents[1] / "p.md").write_text("Answer, changed.\n", encoding="utf-8")
    mismatches = verify_run(run_dir)
    assert [m.kind for m in mismatches] == ["file"]
    assert "p.md" in mismatches[0].path and "changed since the run" in mismatches[0].path


def test_a_swapped_lock_fails(run_dir: Path) -> None:
    (run_dir / "lock.json").write_text("{}\n", encoding="utf-8")
    assert [m.kind for m in verify_run(run_dir)] == ["lock"]
