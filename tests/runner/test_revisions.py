"""Revision arms in a run: each arm's commit is checked out privately, given the pinned
harness, built, frozen and handed to the agent (``PAIRBENCH_SOURCE``); an agent that writes
into its checkout is caught (infra, then the run stops naming the file); the user's
repository is not touched and no worktree outlives the run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pairbench import resume_run, start_run
from pairbench._errors import ResumeRefused
from pairbench.store import RunDir
from pairbench.studies.runtime_revision_ab import PINNED, make_example

# The agent reports what it was given: the sha256 of a production file (the fix and the
# regression live in minirt/_paths.py) and of a harness file, as its final answer.
REPORT = (
    "import hashlib, os, sys; sys.stdin.read(); s = os.environ['PAIRBENCH_SOURCE']; "
    "h = lambda p: hashlib.sha256(open(os.path.join(s, p), 'rb').read()).hexdigest()[:16]; "
    "print(os.environ['PAIRBENCH_SOURCE_COMMIT'][:12], h('minirt/_paths.py'), "
    "h('harness/run_scenario.py'), os.stat(os.path.join(s, 'minirt')).st_mode & 0o222 == 0)"
)
# As root it can still write: the checkout's write bits are off, so it puts one back first.
TAMPER = (
    "import os, stat, sys; sys.stdin.read(); p = os.path.join(os.environ['PAIRBENCH_SOURCE'], "
    "'minirt', '_paths.py'); os.chmod(p, 0o644); open(p, 'a').write('# edited\\n'); print('ok')"
)


def _experiment(
    root: Path, repo: Path, agent: str, candidate: str = "harness-leak", *, proof: bool = False
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "p.md").write_text("Report.\n", encoding="utf-8")
    path = root / "experiment.yaml"
    path.write_text(
        f"""id: revisions
version: "1"
trials: 1
treatment: source
budget: {{concurrency: 1}}
sources:
  runtime:
    repo: {os.path.relpath(repo, root)}
    production: {{include: ["minirt/**", pyproject.toml], exclude: ["minirt/tests/**"]}}
    harness: {{commit: {PINNED["harness"]}, paths: ["harness/**"]}}
    build: {{command: [python3, harness/build.py, "{{venv}}"], timeout_s: 120}}
{"    proof: {kind: python, packages: [minirt]}" if proof else ""}
agent:
  adapter: command
  settings: {{command: [python3, -c, {json.dumps(agent)}]}}
arms:
  baseline: {{source: {{commit: {PINNED["baseline"]}}}}}
  candidate: {{source: {{commit: {PINNED[candidate]}}}}}
tasks:
  - {{id: t1, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}
""",
        encoding="utf-8",
    )
    return path


def _blob(repo: Path, commit: str, path: str) -> str:
    data = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, check=True
    ).stdout
    return hashlib.sha256(data).hexdigest()[:16]


def _tree_digest(root: Path) -> str:
    """Every file under ``root`` (``.git`` included): path, mode and bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root)}\0{path.stat().st_mode}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("minirt") / "minirt"
    make_example(path)
    return path


@pytest.mark.whole_run
def test_each_arm_runs_its_commit_with_the_pinned_harness_and_nothing_is_left(
    repo: Path, tmp_path: Path
) -> None:
    before = _tree_digest(repo)
    exp = _experiment(tmp_path / "exp", repo, REPORT)
    run = start_run(exp, tmp_path / "runs", run_seed=1)
    answers = {r.arm: (r.final_answer or "").split() for r in run.results}
    harness = _blob(repo, PINNED["harness"], "harness/run_scenario.py")
    for arm, name in (("baseline", "baseline"), ("candidate", "harness-leak")):
        commit, paths, harness_seen, frozen = answers[arm]
        assert commit == PINNED[name][:12]
        assert paths == _blob(repo, PINNED[name], "minirt/_paths.py")
        # harness-leak edits harness/run_scenario.py; the pinned harness is what it got.
        assert harness_seen == harness
        assert frozen == "True"  # frozen: no write bit left (root ignores them, so asked)
    assert _blob(repo, PINNED["harness-leak"], "harness/run_scenario.py") != harness
    info = json.loads((run.run_dir / "run.json").read_text(encoding="utf-8"))
    for arm in ("baseline", "candidate"):
        stored = run.run_dir / "sources" / arm
        manifest = json.loads((stored / "production-manifest.json").read_text(encoding="utf-8"))
        assert manifest["sha256"] == info["identities"]["revisions"][arm]["production_sha256"]
        prepared = json.loads((stored / "prepared.json").read_text(encoding="utf-8"))
        assert prepared["build"]["exit_code"] == 0
        assert "harness/run_scenario.py" in prepared["harness_files"]
        assert not (run.run_dir / "work" / "_sources" / arm / "tree").exists()
    assert _tree_digest(repo) == before  # the user's repository was only read


@pytest.mark.whole_run
def test_an_agent_that_writes_into_its_checkout_is_infra_and_the_run_stops(
    repo: Path, tmp_path: Path
) -> None:
    exp = _experiment(tmp_path / "exp", repo, TAMPER)
    run = start_run(exp, tmp_path / "runs", run_seed=1)
    kept = RunDir(run.run_dir).infra_attempts()
    reasons = [r.reason for r in kept] + [r.reason for r in run.results if r.outcome != "passed"]
    assert any(
        "source drift during the attempt" in why and "minirt/_paths.py (content)" in why
        for why in reasons
    ), reasons
    # The retry meets the edited file before it starts: a second infra failure stops the run.
    assert any("source drift before the attempt" in why for why in reasons), reasons
    assert run.status.startswith("stopped"), run.status


# A runtime process: imports part of minirt from wherever Python finds it, then answers.
IMPORTS = "import sys; sys.stdin.read(); import minirt._paths, minirt._args; print('ok')"


@pytest.mark.whole_run
def test_the_mounted_byte_proof_reports_coverage_when_honest(repo: Path, tmp_path: Path) -> None:
    exp = _experiment(tmp_path / "exp", repo, IMPORTS, "candidate", proof=True)
    run = start_run(exp, tmp_path / "runs", run_seed=1)
    assert {r.outcome for r in run.results} == {"passed"}, [r.reason for r in run.results]
    for arm in ("baseline", "candidate"):
        events = _events(run.run_dir, arm)
        (proof,) = [e for e in events if e["kind"] == "mounted_proof"]
        assert proof["status"] == "ok" and proof["problems"] == []
        loaded, total = (int(x) for x in str(proof["coverage"]).split("/"))
        # minirt/__init__.py, _paths.py, _args.py and what they import: some, never all.
        assert 3 <= loaded < total, proof["coverage"]
        assert int(str(proof["processes"])) >= 1


@pytest.mark.whole_run
def test_a_shadowing_copy_of_the_runtime_stops_the_run(repo: Path, tmp_path: Path) -> None:
    # A copy elsewhere, put first on the path by the agent: not the arm's checkout.
    shadow = tmp_path / "shadow"
    shutil.copytree(repo / "minirt", shadow / "minirt")  # main holds baseline's production
    agent = f"import sys; sys.path.insert(0, {str(shadow)!r}); " + IMPORTS
    exp = _experiment(tmp_path / "exp", repo, agent, "candidate", proof=True)
    run = start_run(exp, tmp_path / "runs", run_seed=1)
    kept = RunDir(run.run_dir).infra_attempts()
    assert kept and all("mounted-byte proof shadowed" in (r.reason or "") for r in kept)
    assert str(shadow) in (kept[0].reason or "")
    assert run.status.startswith("stopped"), run.status


def _events(run_dir: Path, arm: str) -> list[dict[str, object]]:
    path = run_dir / "transcripts" / arm / "t1" / "0.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_resume_after_an_arm_commit_changed_is_refused_naming_it_and_touches_nothing(
    repo: Path, tmp_path: Path
) -> None:
    exp = _experiment(tmp_path / "exp", repo, "import sys; sys.stdin.read(); print('ok')")
    run = start_run(exp, tmp_path / "runs", run_seed=1)
    stored = _tree_digest(run.run_dir)
    text = exp.read_text(encoding="utf-8")
    exp.write_text(text.replace(PINNED["harness-leak"], PINNED["candidate"]), encoding="utf-8")
    with pytest.raises(ResumeRefused) as refused:
        resume_run(run.run_dir)
    message = str(refused.value)
    assert "arms.candidate.source.commit" in message
    assert f"{PINNED['harness-leak']!r} then, {PINNED['candidate']!r} now" in message
    assert _tree_digest(run.run_dir) == stored  # nothing stored was touched
