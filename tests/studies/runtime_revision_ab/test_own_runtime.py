"""Bring your own runtime: a runtime written the way a user writes it (its own git repository
and harness, no pairbench import, only the documented contract: ``own_runtime_files/``) runs
the study's scenarios through the ``rab-runtime`` adapter against the scripted Chat
Completions double behind the run's recording proxy, and its report has the protocol's
sections: task success and the campaign grid, usage with coverage, context, dispatch,
latency, scope from the snapshots (its out-of-workspace write an unauthorized effect that
fails a gate), and events-only rows that say why they are missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.common import cli
from helpers.report_checks import check_proxy_usage_is_never_unmeasured
from pairbench import start_run
from pairbench.testing.chat_double import ChatScript, start_chat_double

pytestmark = pytest.mark.whole_run

FILES = Path(__file__).parent / "own_runtime_files"
STUDY_TASKS = ("ar-001", "ar-007")


def _git(repo: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@example.org",
           "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@example.org"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


def _runtime_repo(root: Path, *, candidate_change: tuple[str, str]) -> dict[str, str]:
    """The user's repository: tinyrt at a baseline commit and a candidate commit."""
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "harness").mkdir()
    (root / "harness" / "build.py").write_text(
        "import pathlib, sys\npathlib.Path(sys.argv[1]).mkdir(parents=True, exist_ok=True)\n",
        encoding="utf-8",
    )
    shutil.copy(FILES / "tinyrt.py", root / "tinyrt.py")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "tinyrt")
    baseline = _git(root, "rev-parse", "HEAD")
    text = (root / "tinyrt.py").read_text(encoding="utf-8")
    old, new = candidate_change
    assert old in text
    (root / "tinyrt.py").write_text(text.replace(old, new), encoding="utf-8")
    _git(root, "commit", "-q", "-am", "candidate")
    return {"baseline": baseline, "candidate": _git(root, "rev-parse", "HEAD")}


def _experiment(root: Path, repo: Path, commits: dict[str, str], upstream: str,
                *, events: bool) -> Path:  # fmt: skip
    tasks = "\n".join(
        f"  - {{id: {t}, prompt: p.md, grader: {{name: minirt-acceptance}}}}" for t in STUDY_TASKS
    )
    root.mkdir(parents=True)
    (root / "p.md").write_text("One scenario of the study.\n", encoding="utf-8")
    path = root / "experiment.yaml"
    path.write_text(
        f"""id: own-runtime
version: "1"
study: runtime-revision-ab
treatment: source
order: {{block: campaign}}
budget: {{trial_timeout_s: 60, concurrency: 1}}
comparisons: [[baseline, candidate]]
sources:
  tinyrt:
    repo: {os.path.relpath(repo, root)}
    production: {{include: [tinyrt.py]}}
    harness: {{commit: {commits["baseline"]}, paths: ["harness/**"]}}
    build: {{command: [python3, harness/build.py, "{{venv}}"], timeout_s: 60}}
proxy: {{upstream: "{upstream}", env: TINYRT_BASE_URL, require: {{temperature: 1.0}}}}
agent:
  adapter: rab-runtime
  settings: {{command: ["{{python}}", "{{source}}/tinyrt.py"], base_url_env: TINYRT_BASE_URL,
              model: local, events: {str(events).lower()}}}
arms:
  baseline: {{source: {{name: tinyrt, commit: {commits["baseline"]}}}}}
  candidate: {{source: {{name: tinyrt, commit: {commits["candidate"]}}}}}
report:
  sections: [arms, revision, revision-metrics, revision-gates, revision-audit, outcomes,
             usage, failures, attention]
tasks:
{tasks}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def double() -> Iterator[str]:
    script = ChatScript.model_validate_json((FILES / "script.json").read_text(encoding="utf-8"))
    with start_chat_double(script) as server:
        yield server.url


def _report(tmp_path: Path, double: str, *, events: bool, change: tuple[str, str]) -> str:
    commits = _runtime_repo(tmp_path / "tinyrt", candidate_change=change)
    exp = _experiment(tmp_path / "exp", tmp_path / "tinyrt", commits, double, events=events)
    run = start_run(exp, tmp_path / "runs", run_seed=3, stage="screening")
    assert {r.outcome for r in run.results} <= {"passed", "failed"}, [
        (r.arm, r.task, r.outcome, r.reason) for r in run.results
    ]
    done = cli("report", str(run.run_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    check_proxy_usage_is_never_unmeasured(run.run_dir)
    return (run.run_dir / "report.md").read_text(encoding="utf-8")


def _row(text: str, label: str) -> str:
    (line,) = [x for x in text.splitlines() if x.startswith(f"| {label} |")]
    return line


ESCAPE = ('REVISION = "baseline"', 'REVISION = "candidate"')
ESCAPE_AND_INFLATE = (
    'REVISION = "baseline"\nCLAIM_TOKENS = 0',
    'REVISION = "candidate"\nCLAIM_TOKENS = 3277',
)


def _gate(text: str, title: str) -> str:
    return _row(text.split("## Runtime revision: release gates")[1], title)


def test_an_own_runtime_without_events_gets_every_independent_row(
    tmp_path: Path, double: str
) -> None:
    text = _report(tmp_path, double, events=False, change=ESCAPE)
    for heading in (
        "## Runtime revision: task success and campaign test",
        "## Runtime revision: protocol metrics",
        "## Runtime revision: release gates",
        "## Runtime revision: audit list",
    ):
        assert heading in text
    assert "| ar-001 | P/P |" in text and "| ar-007 | P/P |" in text
    assert "| 0 | 2 | 2 | 2 | +0 |" in text  # the campaign-level pair
    # Measured by the proxy and the snapshots: never "not measured".
    assert "no model usage reported" not in text
    assert (
        _row(text, "Measured usage: coverage")
        == "| Measured usage: coverage | 4/4 requests | 4/4 requests |"
    )
    assert "missing" not in _row(text, "Measured usage: input tokens (measured requests only)")
    assert "(4/4 requests)" in _row(text, "Context: measured input per request")
    assert _row(text, "Dispatch: proposed calls") == "| Dispatch: proposed calls | 3 | 3 |"
    assert _row(text, "Dispatch: observed (result returned)").endswith("| 3 | 3 |")
    assert "(reported 2/2)" in _row(text, "Latency: generation (server)")
    # Only what the runtime alone knows is missing, and says why.
    assert _row(text, "Dispatch: executed (receipts)") == (
        "| Dispatch: executed (receipts) | missing: the runtime reports no events (0/2 "
        "executions) | missing: the runtime reports no events (0/2 executions) |"
    )
    # The candidate's write outside the workspace is an unauthorized effect: its gate fails,
    # naming the file the snapshots saw.
    assert _row(text, "Scope: unauthorized effects").endswith(
        "| 0 (in 0/2 executions) | 1 (in 1/2 executions) |"
    )
    gate = _gate(text, "zero unauthorized effects")
    assert "| FAIL |" in gate and "ar-007 [ar-007: perimeter:notes.txt (added)]" in gate
    assert "| PASS |" in _gate(text, "the runtime's own report agrees with the proxy")


def test_with_its_events_the_rows_fill_and_an_inflated_usage_claim_is_flagged(
    tmp_path: Path, double: str
) -> None:
    text = _report(tmp_path, double, events=True, change=ESCAPE_AND_INFLATE)
    assert _row(text, "Runtime events present") == "| Runtime events present | 2/2 | 2/2 |"
    # The baseline refused the write outside its workspace; the candidate executed it.
    assert _row(text, "Dispatch: executed (receipts)") == (
        "| Dispatch: executed (receipts) | 2 (reported by 2/2 executions) | 3 (reported by "
        "2/2 executions) |"
    )
    assert _row(text, "Scope: denials (not effects)").startswith(
        "| Scope: denials (not effects) | 1 (reported by 2/2 executions) | 0 (reported"
    )
    gate = _gate(text, "the runtime's own report agrees with the proxy")
    assert "| FAIL |" in gate
    assert "ar-001: input tokens: runtime 6,554, proxy " in gate
    # The measured figure is the proxy's, not the claim.
    assert "6,554" not in _row(text, "Measured usage: input tokens (measured requests only)")
