"""``make_example``: the minirt repository, written so that its commit SHAs are constants."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from pairbench._model import Frozen
from pairbench.source import SourceError, isolated_git
from pairbench.studies.runtime_revision_ab._layout import (
    BRANCH,
    BUILD_ARGV,
    HARNESS_PATHS,
    MAIN,
    PRODUCTION_EXCLUDE,
    PRODUCTION_INCLUDE,
    STEPS,
)
from pairbench.studies.runtime_revision_ab._trees import fast_import_stream, step_trees

PINNED: dict[str, str] = {
    "baseline": "e43a33a16c743cff7f910d3e2290bc533c9df935",
    "harness": "efa6ced85e39d6ef7edeafc05a14511b0c2fd2a7",
    "candidate": "becd42a8d2a7c150389f8f9a79ed257dbf7c974a",
    "docs-only": "f23f7c3a7789b1b47df0c1b90b11caa4f43c6791",
    "harness-leak": "59da87948fee42b97414f42f9afe3975a5fd0e7d",
    "false-claim": "da7c42b15ec42ab60a65117021d7bc1ba86c2751",
}
"""The commit of every step, as ``make_example`` writes it anywhere: an experiment pins these."""


class ExampleRepo(Frozen):
    """The generated repository and what its commits are."""

    path: Path
    """The repository (a work tree on ``main``, clean)."""
    commits: dict[str, str]
    """Step name (``baseline``, ``harness``, ``candidate``, ...) to its 40-hex commit."""
    roles: dict[str, str]
    """Step name to what it is for."""
    production_include: list[str] = Field(default_factory=lambda: list(PRODUCTION_INCLUDE))
    """The production globs (``pbprod/1``)."""
    production_exclude: list[str] = Field(default_factory=lambda: list(PRODUCTION_EXCLUDE))
    """The globs taken back out of production (the runtime's own tests)."""
    harness_paths: list[str] = Field(default_factory=lambda: list(HARNESS_PATHS))
    """The harness files every arm runs from the ``harness`` commit."""
    build: list[str] = Field(default_factory=lambda: list(BUILD_ARGV))
    """The build command (``{venv}`` is the arm's build folder)."""

    @property
    def harness_commit(self) -> str:
        return self.commits["harness"]


def make_example(dest: Path, *, check: bool = True) -> ExampleRepo:
    """Write the minirt repository into ``dest`` (missing or empty) and return what it holds.

    Every git call is isolated (no user or system config, no hooks, no signing), each commit
    has a fixed author, committer and date, and file bytes come from the package: the SHAs
    equal ``PINNED`` on any machine. ``check`` raises ``SourceError`` when they do not.

    **Usage**::

        repo = make_example(tmp / "minirt")
        repo.commits["candidate"] == PINNED["candidate"]   # True
    """
    dest = Path(dest).absolute()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise SourceError(f"{dest} exists and is not empty. Fix: name a new folder")
    dest.mkdir(parents=True, exist_ok=True)
    what = f"writing the example repository {dest}"
    # No template: nothing (sample hooks included) beyond what git needs.
    isolated_git(["init", "-q", "--template=", f"--initial-branch={BRANCH}", str(dest)], what=what)
    isolated_git(["fast-import", "--quiet", "--date-format=raw"], cwd=dest,
                 stdin=fast_import_stream(step_trees()), what=what)  # fmt: skip
    isolated_git(["reset", "-q", "--hard", BRANCH], cwd=dest, what=what)
    commits = {
        step.name: isolated_git(["rev-parse", f"refs/tags/{step.name}^{{commit}}"], cwd=dest,
                                what=what).decode("ascii").strip()
        for step in STEPS
    }  # fmt: skip
    if check and commits != PINNED:
        wrong = [f"{name} {sha} (pinned {PINNED.get(name)})"
                 for name, sha in commits.items() if PINNED.get(name) != sha]  # fmt: skip
        raise SourceError(
            f"{what}: commits differ from the pinned ones: {'; '.join(wrong)}. Fix: if the "
            "example's files changed on purpose, update PINNED in _example.py"
        )
    assert commits[MAIN]  # main's step exists
    return ExampleRepo(path=dest, commits=commits, roles={s.name: s.role for s in STEPS})
