"""Shared set-up of the runtime-revision-ab example tests: the example repository with a
worktree per revision, and the scripted model server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pairbench.source import isolated_git
from pairbench.studies.runtime_revision_ab import ModelServer, make_example, serve_model


def worktrees(root: Path, steps: tuple[str, ...]) -> dict[str, Path]:
    """A detached git worktree of each step of a fresh example repository."""
    repo = make_example(root / "minirt")
    trees = {}
    for step in steps:
        tree = root / f"wt-{step}"
        isolated_git(["worktree", "add", "-q", "--detach", str(tree), repo.commits[step]],
                     cwd=repo.path)  # fmt: skip
        trees[step] = tree
    return trees


def model() -> Iterator[ModelServer]:
    """The scripted model server for one module's tests."""
    with serve_model() as server:
        yield server
