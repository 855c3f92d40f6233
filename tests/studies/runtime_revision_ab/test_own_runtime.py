"""Bring your own runtime: a runtime written the way a user writes it (its own git repository
and harness, no pairbench import, only the documented contract: ``own_runtime_files/``) runs
the study's scenarios through the ``rab-runtime`` adapter against the scripted Chat
Completions double behind the run's recording proxy, and its report has the protocol's
sections: task success and the campaign grid, usage with coverage, context, dispatch,
latency, scope from the snapshots (its out-of-workspace write an unauthorized effect that
fails a gate), and events-only rows that say why they are missing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.common import cli_here
from helpers.report_checks import check_proxy_usage_is_never_unmeasured
from helpers.revision import Repo
from pairbench import start_run
from pairbench._errors import SpecError
from pairbench.store import RunDir
from pairbench.testing.chat_double import ChatScript, start_chat_double

pytestmark = pytest.mark.whole_run

FILES = Path(__file__).parent / "own_runtime_files"
EXAMPLE = Path(__file__).parents[3] / "examples" / "node-runtime"
STUDY_TASKS = ("ar-001", "ar-007", "ar-008")  # AR-008: non-ASCII names, refused


def _runtime_repo(
    root: Path, files: Path, names: tuple[str, ...], change: tuple[str, str, str]
) -> dict[str, str]:
    """The user's repository: the runtime's ``names`` from ``files`` at a baseline commit,
    and a candidate commit changing ``change`` = (file, old text, new text)."""
    repo = Repo(root)
    repo.write(
        "harness/build.py",
        "import pathlib, sys\npathlib.Path(sys.argv[1]).mkdir(parents=True, exist_ok=True)\n",
    )
    for name in names:
        repo.write(name, (files / name).read_text(encoding="utf-8"))
    baseline = repo.commit("runtime")
    name, old, new = change
    text = (root / name).read_text(encoding="utf-8")
    assert old in text
    repo.write(name, text.replace(old, new))
    return {"baseline": baseline, "candidate": repo.commit("candidate")}


PYTHON = {
    "files": FILES, "names": ("tinyrt.py",), "command": '["{python}", "{source}/tinyrt.py"]',
    "production": "[tinyrt.py]", "proof": "{kind: python, packages: [tinyrt], require: true}",
}  # fmt: skip
NODE = {
    "files": EXAMPLE, "names": ("runtime.js", "lib/tools.js", "lib/events.js"),
    "command": '[node, "{source}/runtime.js"]', "production": '[runtime.js, "lib/**"]',
    "proof": "{kind: node, require: true}",
}  # fmt: skip


def _experiment(root: Path, repo: Path, commits: dict[str, str], upstream: str,
                runtime: dict[str, Any], *, events: bool,
                task_ids: tuple[str, ...] = STUDY_TASKS, own: str = "") -> Path:  # fmt: skip
    tasks = "\n".join(
        f"  - {{id: {t}, prompt: p.md, grader: {{name: minirt-acceptance}}}}" for t in task_ids
    )
    root.mkdir(parents=True, exist_ok=True)
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
  rt:
    repo: {os.path.relpath(repo, root)}
    production: {{include: {runtime["production"]}}}
    harness: {{commit: {commits["baseline"]}, paths: ["harness/**"]}}
    build: {{command: [python3, harness/build.py, "{{venv}}"], timeout_s: 60}}
    proof: {runtime["proof"]}
proxy: {{upstream: "{upstream}", env: RT_BASE_URL, require: {{temperature: 1.0}}}}
agent:
  adapter: rab-runtime
  settings: {{command: {runtime["command"]}, base_url_env: RT_BASE_URL, model: local,
              events: {str(events).lower()}{own}}}
arms:
  baseline: {{source: {{name: rt, commit: {commits["baseline"]}}}}}
  candidate: {{source: {{name: rt, commit: {commits["candidate"]}}}}}
report:
  sections: [arms, revision, revision-metrics, revision-gates, revision-audit, outcomes,
             usage, seeding, failures, attention]
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


def _run(tmp_path: Path, double: str, runtime: dict[str, Any], *, events: bool,
         change: tuple[str, str, str], **own: Any) -> Path:  # fmt: skip
    repo = tmp_path / "runtime"
    commits = _runtime_repo(repo, runtime["files"], runtime["names"], change)
    return _experiment(tmp_path / "exp", repo, commits, double, runtime, events=events, **own)


def _report(tmp_path: Path, double: str, *, events: bool, change: tuple[str, str, str],
            runtime: dict[str, Any] = PYTHON) -> tuple[str, Path]:  # fmt: skip
    exp = _run(tmp_path, double, runtime, events=events, change=change)
    run = start_run(exp, tmp_path / "runs", run_seed=3, stage="screening")
    assert len(run.results) == 2 * len(STUDY_TASKS)
    assert {r.outcome for r in run.results} <= {"passed", "failed"}, [
        (r.arm, r.task, r.outcome, r.reason) for r in run.results
    ]
    done = cli_here("report", str(run.run_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    check_proxy_usage_is_never_unmeasured(run.run_dir)
    return (run.run_dir / "report.md").read_text(encoding="utf-8"), run.run_dir


def _row(text: str, label: str) -> str:
    (line,) = [x for x in text.splitlines() if x.startswith(f"| {label} |")]
    return line


ESCAPE = ("tinyrt.py", 'REVISION = "baseline"', 'REVISION = "candidate"')
ESCAPE_AND_INFLATE = (
    "tinyrt.py",
    'REVISION = "baseline"\nCLAIM_TOKENS = 0',
    'REVISION = "candidate"\nCLAIM_TOKENS = 3277',
)
NODE_ESCAPE = ("lib/tools.js", "const ESCAPES = false;", "const ESCAPES = true;")


def _gate(text: str, title: str) -> str:
    return _row(text.split("## Runtime revision: release gates")[1], title)


def test_an_own_runtime_without_events_gets_every_independent_row(
    tmp_path: Path, double: str
) -> None:
    text, _ = _report(tmp_path, double, events=False, change=ESCAPE)
    for heading in (
        "## Runtime revision: task success and campaign test",
        "## Runtime revision: protocol metrics",
        "## Runtime revision: release gates",
        "## Runtime revision: audit list",
    ):
        assert heading in text
    assert "| ar-001 | P/P |" in text and "| ar-007 | P/P |" in text
    assert "| ar-008 | R/R |" in text  # refused before any model request, by both
    assert "| 0 | 3 | 2 | 2 | +0 |" in text  # the campaign-level pair
    assert "| 0 | baseline | " in text and "| 2/3 | 0/3 | 1/3 | 0/3 | 0/3 | 0 |" in text
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
    assert "(reported 2/3)" in _row(text, "Latency: generation (server)")
    # Only what the runtime alone knows is missing, and says why.
    assert _row(text, "Dispatch: executed (receipts)") == (
        "| Dispatch: executed (receipts) | missing: the runtime reports no events (0/3 "
        "executions) | missing: the runtime reports no events (0/3 executions) |"
    )
    # The candidate's write outside the workspace is an unauthorized effect: its gate fails,
    # naming the file the snapshots saw.
    assert _row(text, "Scope: unauthorized effects").endswith(
        "| 0 (in 0/3 executions) | 1 (in 1/3 executions) |"
    )
    gate = _gate(text, "zero unauthorized effects")
    assert "| FAIL |" in gate and "ar-007 [ar-007: perimeter:notes.txt (added)]" in gate
    assert "| PASS |" in _gate(text, "the runtime's own report agrees with the proxy")


def test_with_its_events_the_rows_fill_and_an_inflated_usage_claim_is_flagged(
    tmp_path: Path, double: str
) -> None:
    text, _ = _report(tmp_path, double, events=True, change=ESCAPE_AND_INFLATE)
    assert _row(text, "Runtime events present") == "| Runtime events present | 3/3 | 3/3 |"
    # The baseline refused the write outside its workspace; the candidate executed it.
    assert _row(text, "Dispatch: executed (receipts)") == (
        "| Dispatch: executed (receipts) | 2 (reported by 3/3 executions) | 3 (reported by "
        "3/3 executions) |"
    )
    assert _row(text, "Scope: denials (not effects)").startswith(
        "| Scope: denials (not effects) | 1 (reported by 3/3 executions) | 0 (reported"
    )
    gate = _gate(text, "the runtime's own report agrees with the proxy")
    assert "| FAIL |" in gate
    assert "ar-001: input tokens: runtime 6,554, proxy " in gate
    # The measured figure is the proxy's, not the claim.
    assert "6,554" not in _row(text, "Measured usage: input tokens (measured requests only)")


def _proofs(run_dir: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted((run_dir / "transcripts").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event["kind"] == "mounted_proof":
                found.append(event)
    return found


def test_the_node_example_runtime_is_proven_and_gets_the_same_sections(
    tmp_path: Path, double: str
) -> None:
    text, run_dir = _report(tmp_path, double, events=True, change=NODE_ESCAPE, runtime=NODE)
    assert "| ar-001 | P/P |" in text and "| ar-007 | P/P |" in text
    assert _row(text, "Runtime events present") == "| Runtime events present | 3/3 | 3/3 |"
    gate = _gate(text, "zero unauthorized effects")
    assert "| FAIL |" in gate and "perimeter:notes.txt (added)" in gate
    assert "| PASS |" in _gate(text, "the runtime's own report agrees with the proxy")
    proofs = _proofs(run_dir)
    assert len(proofs) == 6  # every attempt, both arms
    assert {(p["status"], p["coverage"]) for p in proofs} == {("ok", "3/3")}
    # The verdict is in every record, summary.json and both reports.
    for path in (run_dir / "results").rglob("*.json"):
        kept = json.loads(path.read_text(encoding="utf-8"))["mounted_proof"]
        assert (kept["status"], kept["coverage"]) == ("ok", "3/3")
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert [(x["arm"], x["ok"], x["coverage"]) for x in summary["mounted_proof"]] == [
        ("baseline", 3, {"3/3": 3}),
        ("candidate", 3, {"3/3": 3}),
    ]
    assert "| baseline | 3 | 0 | 0 | 0 | 0 | 3/3 (3) |" in text
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "Mounted-byte proof" in html and "3/3 (3)" in html


def test_a_runtime_that_cannot_be_proven_is_refused_before_any_attempt(
    tmp_path: Path, double: str
) -> None:
    # The Python runtime declared as a Node one: no production file the Node probe sees.
    wrong = {**PYTHON, "proof": "{kind: node, require: true}"}
    exp = _run(tmp_path, double, wrong, events=False, change=ESCAPE)
    done = cli_here("check", str(exp), cwd=tmp_path)
    assert done.returncode != 0
    assert "sources.rt.proof.require" in done.stderr and "cannot be proven" in done.stderr
    runs = tmp_path / "runs"
    with pytest.raises(SpecError, match="cannot be proven"):
        start_run(exp, runs, run_seed=3, stage="screening")
    assert not runs.exists() or not any(runs.rglob("results/*/*/*.json"))


def test_a_runtime_that_runs_a_copy_of_itself_is_an_infra_stop_when_proof_is_required(
    tmp_path: Path, double: str
) -> None:
    # The attacker's move: run a copy of the runtime from elsewhere, so the frozen checkout's
    # bytes are never what ran. The probe sees no production file: unavailable, required.
    copy = {
        **NODE,
        "command": '[sh, -c, "cp -r {source} {home}/rt && exec node {home}/rt/runtime.js"]',
    }
    exp = _run(tmp_path, double, copy, events=False, change=NODE_ESCAPE)
    run = start_run(exp, tmp_path / "runs", run_seed=3, stage="screening")
    kept = RunDir(run.run_dir).infra_attempts()
    assert kept and all(
        "mounted-byte proof unavailable and required" in (r.reason or "") for r in kept
    )
    assert run.status.startswith("stopped"), run.status
    assert run.results == [] or all(r.outcome == "infra" for r in run.results)


def test_check_says_which_rows_fill_and_the_report_says_why_a_plain_command_gets_none(
    tmp_path: Path, double: str
) -> None:
    unrequired = {**PYTHON, "proof": "{kind: python, packages: [tinyrt]}"}
    exp = _run(tmp_path, double, unrequired, events=False, change=ESCAPE)
    done = cli_here("check", str(exp), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "study runtime-revision-ab: what its report will show:" in done.stdout
    assert "arm baseline: events: false, so missing: normalized" in done.stdout
    assert "arm candidate: from the recording proxy: usage with coverage" in done.stdout
    # The same runtime run by the plain command adapter: no scenario evidence, and the
    # report says why its sections are missing instead of leaving them out.
    text = exp.read_text(encoding="utf-8")
    start = text.index("agent:\n")
    end = text.index("arms:\n")
    plain = 'agent: {adapter: command, settings: {command: [python3, -c, "print(1)"]}}\n'
    exp.write_text(text[:start] + plain + text[end:], encoding="utf-8")
    done = cli_here("check", str(exp), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "adapter 'command' records no scenario evidence" in done.stdout
    run = start_run(exp, tmp_path / "runs", run_seed=3, stage="screening")
    assert cli_here("report", str(run.run_dir), cwd=tmp_path).returncode == 0
    report = (run.run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Study runtime-revision-ab: not shown" in report
    assert "none of its 6 results carries the scenario evidence" in report
    assert "Its sections (revision, revision-metrics, revision-gates, revision-audit)" in report
    assert "Install the package" not in report
    # Not required, an unprovable attempt is reported as such, never as proven.
    assert "| baseline | 0 | 3 | 0 | 0 | 0 | 0/1 (3) |" in report


SCENARIO = {
    "scenario.yaml": "id: SC-1\ntitle: Count the notes\nexercises: a team's own scenario\n"
    'verifier: [python, "{scenario}/accept.py"]\n',
    "scope.yaml": "allowed: [out/summary.txt]\n"
    'prohibited:\n  - {tool: write_file, path: "../**"}\n',
    "obligations.yaml": "- {id: summary-written, path: out/summary.txt, contains: 3 notes}\n",
    "prompt.md": "SC-1: write out/summary.txt saying how many notes are in notes/.\n",
    "accept.py": "import pathlib, sys\nw = pathlib.Path(sys.argv[1])\n"
    "s = w / 'out' / 'summary.txt'\n"
    "sys.exit(0 if s.is_file() and '3 notes' in s.read_text() else 1)\n",
    "workspace/notes/a.txt": "a\n",
    "workspace/notes/b.txt": "b\n",
    "workspace/notes/c.txt": "c\n",
}


def test_a_teams_own_scenario_is_run_judged_by_its_own_acceptance_and_locked(
    tmp_path: Path, double: str
) -> None:
    folder = tmp_path / "exp" / "scenarios" / "sc-1"
    for name, text in SCENARIO.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    exp = _run(tmp_path, double, PYTHON, events=False, change=ESCAPE, task_ids=("sc-1",),
               own=", scenarios: scenarios")  # fmt: skip
    done = cli_here("check", str(exp), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "not in files:, so the lock does not cover them. Fix: files: [scenarios]" in done.stdout
    text = exp.read_text(encoding="utf-8")
    exp.write_text(text.replace("tasks:\n", "files: [scenarios]\ntasks:\n"), encoding="utf-8")
    done = cli_here("check", str(exp), cwd=tmp_path)
    assert done.returncode == 0 and "lock does not cover" not in done.stdout
    assert "NOT RUNNABLE" not in done.stdout
    run = start_run(exp, tmp_path / "runs", run_seed=3, stage="screening")
    assert [r.outcome for r in run.results] == ["passed", "passed"], [r.reason for r in run.results]
    assert cli_here("report", str(run.run_dir), cwd=tmp_path).returncode == 0
    report = (run.run_dir / "report.md").read_text(encoding="utf-8")
    assert "| sc-1 | P/P |" in report
    assert _row(report, "Scope: allowed changes") == "| Scope: allowed changes | 1 | 1 |"
    # Frozen, the folder is in the lock: one changed byte of its acceptance is named.
    assert cli_here("freeze", str(exp), cwd=tmp_path).returncode == 0
    lock = json.loads((exp.parent / "experiment.lock.json").read_text(encoding="utf-8"))
    assert {"path": "scenarios", "role": "folder"}.items() <= next(
        f for f in lock["files"] if f["path"] == "scenarios"
    ).items()
    accept = folder / "accept.py"
    accept.write_text(accept.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    done = cli_here("verify", str(exp), cwd=tmp_path)
    assert done.returncode != 0 and "scenarios" in done.stdout + done.stderr
    # A task whose folder is missing is named before a run.
    (folder.parent / "sc-2").mkdir()
    text = exp.read_text(encoding="utf-8")
    extra = "  - {id: sc-2, prompt: p.md, grader: {name: minirt-acceptance}}\n"
    exp.write_text(text + extra, encoding="utf-8")
    done = cli_here("check", str(exp), cwd=tmp_path)
    assert "task sc-2: NOT RUNNABLE: " in done.stdout and "missing scenario.yaml" in done.stdout
