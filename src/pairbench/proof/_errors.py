"""Errors of the mounted-byte proof, under ``SourceError`` (an arm's bytes are in question).

The hierarchy::

    PairbenchError
    └── SourceError
        └── ProofError         the probe cannot be installed or its log read as asked
            └── MountMismatch  the bytes a trial loaded are not the manifest's (or shadowed)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pairbench.source import SourceError

if TYPE_CHECKING:
    from pairbench.proof._verdict import MountProblem


class ProofError(SourceError):
    """The mounted-byte proof cannot be made as asked; the message names what and the fix."""


class MountMismatch(ProofError):
    """A trial ran other bytes than the arm's manifest: ``problems`` names each file.

    An identity failure, not infrastructure: the run stops.
    """

    def __init__(self, problems: list[MountProblem]) -> None:
        self.problems = problems
        shown = "; ".join(p.describe() for p in problems[:20])
        more = f"; and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(
            f"the runtime loaded bytes other than its production manifest's: {shown}{more}. "
            "Fix: remove the shadowing copy or stale bytecode from the runtime's path, or "
            "materialize the worktree again"
        )
