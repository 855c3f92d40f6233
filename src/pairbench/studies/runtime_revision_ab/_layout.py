"""What the example repository holds, independent of any experiment file: which commit is
which, what counts as production, and where the harness lives."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO_DATA = Path(__file__).parent / "minirt_repo"
"""The runtime's files: ``baseline/`` (the first commit's whole tree) and ``patches/``."""

PRODUCTION_INCLUDE = ("minirt/**", "pyproject.toml")
PRODUCTION_EXCLUDE = ("minirt/tests/**",)
HARNESS_PATHS = ("harness/**",)
BUILD_ARGV = ("python3", "harness/build.py", "{venv}")

# One identity and clock for every commit: with them fixed, the SHAs are constants.
AUTHOR = "minirt example <minirt@example.invalid>"
EPOCH = 1704067200  # 2024-01-01T00:00:00Z; commit k is dated EPOCH + k hours
BRANCH = "main"
MAIN = "harness"
"""The step ``main`` points at (and the work tree holds): baseline plus the harness."""


@dataclass(frozen=True)
class Step:
    """One commit of the example: its parent, the patch that makes it, and its role."""

    name: str
    parent: str | None
    patch: str | None
    message: str
    role: str


STEPS: tuple[Step, ...] = (
    Step("baseline", None, None,
         "minirt 0.1.0: tool loop, path policy, truncation, dispatch events",
         "the baseline arm's source"),
    Step("harness", "baseline", "harness.patch",
         "harness: a stdlib build check and a scenario runner stub",
         "the one harness every arm runs (production bytes equal baseline's)"),
    Step("candidate", "harness", "candidate.patch",
         "Decode double-encoded tool arguments; normalize paths before checking them",
         "the candidate arm: one fix (arguments) and one regression (out/../ passes)"),
    Step("docs-only", "harness", "docs-only.patch",
         "Document development; add path policy tests",
         "test-only: README and minirt/tests only, so the production hash is baseline's"),
    Step("harness-leak", "candidate", "harness-leak.patch",
         "Let the scenario runner grant 32 rounds",
         "test-only: a candidate that also edits harness/ (flagged, never run)"),
    Step("false-claim", "harness", "false-claim.patch",
         "Accept completion claims without re-running the verifier",
         "test-only: claims done without a fresh verifier run"),
)  # fmt: skip
"""In commit order; ``main`` points at ``harness`` and every step has a tag of its name."""
