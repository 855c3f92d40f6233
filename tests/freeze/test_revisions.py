"""Arms that are git revisions, as an experiment declares them: ``check`` names every wrong
source or commit with its line and fix; run.json records each arm's production hash from the
git tree, the production paths that differ between arms (the treatment) and harness paths an
arm's commit changes; ``compare`` accepts another commit only as a ``source`` treatment.

The repository is the bundled runtime-revision-ab example (``make_example``: pinned SHAs)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.common import cli_here
from pairbench import start_run
from pairbench.freeze._compare import compare_runs
from pairbench.source import production_manifest
from pairbench.studies.runtime_revision_ab import PINNED, make_example

INCLUDE = '["minirt/**", pyproject.toml]'


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("minirt") / "minirt"
    make_example(path)
    return path


def _experiment(root: Path, repo: Path, a: str, b: str, *, extra: str = "") -> Path:
    """Two arms running commits ``a`` and ``b`` (names in PINNED, or raw values)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    commits = [PINNED.get(c, c) for c in (a, b)]
    path = root / "experiment.yaml"
    path.write_text(
        f"""id: revisions
version: "1"
trials: 1
treatment: source
sources:
  runtime:
    repo: {os.path.relpath(repo, root)}
    production: {{include: {INCLUDE}, exclude: ["minirt/tests/**"]}}
    harness: {{commit: {PINNED["harness"]}, paths: ["harness/**"]}}
agent:
  adapter: command
  settings: {{command: [python3, -c, "import sys; sys.stdin.read(); print('ok')"]}}
arms:
  baseline: {{source: {{name: runtime, commit: {commits[0]}}}}}
  candidate: {{source: {{commit: {commits[1]}}}}}
{extra}tasks:
  - {{id: t1, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}
""",
        encoding="utf-8",
    )
    return path


def _root_beside(repo: Path, name: str) -> Path:
    """An experiment folder beside the repository, so ``repo: ../minirt/minirt`` is relative."""
    return repo.parent.parent / name


def test_run_json_records_production_hashes_treatment_and_flagged_harness_paths(
    repo: Path,
) -> None:
    exp = _experiment(_root_beside(repo, "exp-a"), repo, "baseline", "harness-leak")
    run = start_run(exp, exp.parent / "runs", run_seed=3)
    ident = json.loads((run.run_dir / "run.json").read_text(encoding="utf-8"))["identities"]
    revisions = ident["revisions"]
    include, exclude = ["minirt/**", "pyproject.toml"], ["minirt/tests/**"]
    for arm, name in (("baseline", "baseline"), ("candidate", "harness-leak")):
        expected = production_manifest(repo, PINNED[name], include, exclude)
        assert revisions[arm]["commit"] == PINNED[name]
        assert revisions[arm]["production_sha256"] == expected.sha256
        assert revisions[arm]["production_scheme"] == "pbprod/1"
    # harness-leak is the candidate (the fix and the regression) plus an edited harness file.
    assert revisions["candidate"]["harness_paths_changed"] == ["harness/run_scenario.py (content)"]
    assert revisions["baseline"]["harness_paths_changed"] == []  # it predates the harness
    assert ident["treatment"] == {
        "reference_arm": "baseline",
        "paths": {"candidate": ["minirt/_args.py (content)", "minirt/_paths.py (content)"]},
    }
    assert ident["arms"]["candidate"]["source"] == {"commit": PINNED["harness-leak"]}
    assert ident["sources"] == {}  # no checkout source: the git tree is the identity


def test_a_tests_only_commit_keeps_the_production_hash(repo: Path) -> None:
    exp = _experiment(_root_beside(repo, "exp-b"), repo, "baseline", "docs-only")
    run = start_run(exp, exp.parent / "runs", run_seed=3)
    ident = json.loads((run.run_dir / "run.json").read_text(encoding="utf-8"))["identities"]
    hashes = {a: r["production_sha256"] for a, r in ident["revisions"].items()}
    assert hashes["baseline"] == hashes["candidate"]
    assert ident["treatment"]["paths"] == {"candidate": []}


def test_another_commit_compares_only_as_a_source_treatment(repo: Path) -> None:
    root = _root_beside(repo, "exp-c")
    first = start_run(_experiment(root, repo, "baseline", "candidate"), root / "runs", run_seed=3)
    second = start_run(_experiment(root, repo, "baseline", "docs-only"), root / "runs", run_seed=3)
    assert compare_runs(first.run_dir, second.run_dir).valid  # the experiment says source
    paths = {m.path for m in compare_runs(first.run_dir, second.run_dir, "arm").mismatches}
    assert "identities.revisions.candidate.commit" in paths
    assert "identities.revisions.candidate.production_sha256" in paths


@pytest.mark.parametrize(
    ("a", "b", "extra", "line", "says"),
    [
        ("main", "candidate", "", "arms.baseline.source.commit",
         "'main' is not a commit (40 lowercase hex digits): run `pairbench source pin main`"),
        ("baseline", "deadbeef" * 5, "", "arms.candidate.source.commit",
         f"has no commit {'deadbeef' * 5}. Fix: run `pairbench source pin REF --repo"),
    ],
)  # fmt: skip
def test_check_names_a_branch_or_an_unknown_commit_with_the_fix(
    repo: Path, a: str, b: str, extra: str, line: str, says: str
) -> None:
    root = _root_beside(repo, f"exp-check-{a}-{b[:4]}")
    exp = _experiment(root, repo, a, b, extra=extra)
    done = cli_here("check", str(exp), cwd=root)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    # One problem, on the arm's line: the union's other branch (a plain name) stays quiet.
    assert done.stderr.count(f": {line}") == 1 and "1 problem(s)" in done.stderr, done.stderr
    assert says in done.stderr, done.stderr


def test_check_refuses_a_repo_source_named_without_a_commit_and_a_missing_repo(
    repo: Path,
) -> None:
    root = _root_beside(repo, "exp-shapes")
    exp = _experiment(root, repo, "baseline", "candidate")
    text = exp.read_text(encoding="utf-8")
    exp.write_text(
        text.replace(f"{{source: {{commit: {PINNED['candidate']}}}}}", "{source: runtime}")
    )
    done = cli_here("check", str(exp), cwd=root)
    assert done.returncode != 0
    assert "names the 'repo' source 'runtime' without a commit" in done.stderr
    assert "write source: {name: runtime, commit: <40 hex>}" in done.stderr
    exp.write_text(text.replace("repo: ../", "repo: ../nowhere/"))
    done = cli_here("check", str(exp), cwd=root)
    assert done.returncode != 0 and "does not exist. Fix: clone it there" in done.stderr


def test_an_old_checkout_source_keeps_its_canonical_form() -> None:
    from pairbench.spec._revision import Source

    # A checkout source dumps exactly as before the 'repo' kind existed: old hashes stand.
    assert Source(path="runtime", production_paths=["src"]).model_dump(mode="json") == {
        "path": "runtime",
        "production_paths": ["src"],
    }
    with pytest.raises(ValueError, match="give exactly one"):
        Source(path="a", repo="b")
