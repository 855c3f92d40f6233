"""Errors of revision sources, under ``PairbenchError`` (so the CLI prints one line).

The hierarchy::

    PairbenchError
    └── SourceError        a repository, ref, commit, tree or checkout cannot be used as asked
        ├── SourceDrift    a frozen worktree no longer equals its production manifest
        └── BuildFailed    the declared build exited non-zero, timed out or missed an output
"""

from __future__ import annotations

from pairbench._errors import PairbenchError


class SourceError(PairbenchError):
    """A revision source cannot be used as asked; the message names what and the fix."""


class SourceDrift(SourceError):
    """Files of a frozen worktree differ from its manifest; ``paths`` names each one."""

    def __init__(self, worktree: str, drift: list[str]) -> None:
        self.paths = drift
        shown = "; ".join(drift[:20]) + (f"; and {len(drift) - 20} more" if len(drift) > 20 else "")
        super().__init__(
            f"{worktree}: the worktree drifted from its production manifest: {shown}. "
            "Fix: find what writes into the worktree (a build step, a trial), then "
            "materialize it again"
        )


class BuildFailed(SourceError):
    """The build command failed; the message ends with the last lines of its log."""
