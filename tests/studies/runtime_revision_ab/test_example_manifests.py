"""The example's commits differ where their roles say: docs-only keeps the production hash,
the candidate changes exactly the fix and the regression, harness-leak touches harness/."""

from __future__ import annotations

import pytest

from pairbench.source import (
    Manifest,
    ManifestChange,
    diff_manifests,
    harness_changes,
    production_manifest,
)
from pairbench.studies.runtime_revision_ab import ExampleRepo, make_example
from pairbench.studies.runtime_revision_ab._trees import step_trees


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return make_example(tmp_path_factory.mktemp("example") / "minirt")


def _manifest(repo: ExampleRepo, step: str) -> Manifest:
    return production_manifest(
        repo.path, repo.commits[step], repo.production_include, repo.production_exclude
    )


def test_docs_only_and_the_harness_keep_the_baseline_production_hash(repo: ExampleRepo) -> None:
    baseline = _manifest(repo, "baseline")
    assert _manifest(repo, "docs-only").sha256 == baseline.sha256
    assert _manifest(repo, "harness").sha256 == baseline.sha256
    # ... although docs-only did change files (README, the runtime's own tests).
    changed = _changed_paths(repo, "harness", "docs-only")
    assert "minirt/tests/test_paths.py" in changed and "README.md" in changed


def _changed_paths(repo: ExampleRepo, a: str, b: str) -> set[str]:
    """Paths that differ between two steps' trees (independent of manifests)."""
    trees = step_trees()
    return {p for p in trees[a].keys() | trees[b].keys() if trees[a].get(p) != trees[b].get(p)}


def test_the_candidate_changes_exactly_the_fix_and_the_regression(repo: ExampleRepo) -> None:
    changes = diff_manifests(_manifest(repo, "baseline"), _manifest(repo, "candidate"))
    assert changes == [
        ManifestChange(path="minirt/_args.py", change="content"),
        ManifestChange(path="minirt/_paths.py", change="content"),
    ]
    assert harness_changes(repo.path, repo.harness_commit, repo.commits["candidate"],
                           repo.harness_paths) == []  # fmt: skip


def test_harness_leak_is_flagged_and_false_claim_changes_the_claims(repo: ExampleRepo) -> None:
    leak = harness_changes(
        repo.path, repo.harness_commit, repo.commits["harness-leak"], repo.harness_paths
    )
    assert leak == [ManifestChange(path="harness/run_scenario.py", change="content")]
    assert _manifest(repo, "harness-leak").sha256 == _manifest(repo, "candidate").sha256
    changes = diff_manifests(_manifest(repo, "baseline"), _manifest(repo, "false-claim"))
    assert changes == [ManifestChange(path="minirt/_claims.py", change="content")]


def test_every_python_file_of_every_commit_compiles() -> None:
    checked = 0
    for step, tree in step_trees().items():
        for path, data in tree.items():
            if path.endswith(".py"):
                compile(data, f"{step}:{path}", "exec", dont_inherit=True)
                checked += 1
    assert checked > 40
