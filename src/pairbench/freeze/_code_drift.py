"""Which scoring code changed since a run: each grader's, fixture's and the study's code
installed now against the hashes the run's ``lock.json`` recorded at its start (what
``pairbench report`` checks before it re-scores anything)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class CodeChange(NamedTuple):
    """One piece of scoring code whose hash differs from the run's lock."""

    name: str
    """``graders:<name>``, ``fixtures:<name>`` or ``study:<name>``."""
    where: str
    """The Python package (its folder) the hash covers."""
    old: str
    """The hash the run's lock recorded."""
    new: str
    """The hash of the code installed now."""

    def __str__(self) -> str:
        return f"{self.name} ({self.where}): {self.old} at the run, {self.new} now"


def code_changes(run_dir: Path) -> list[CodeChange]:
    """Each grader, fixture and study whose code differs from the run's ``lock.json``
    (``[]``: none, or a run without a lock)."""
    from pairbench import _registry
    from pairbench._errors import SpecError
    from pairbench.freeze._hashing import code_identity
    from pairbench.freeze._lock import read_lock
    from pairbench.freeze._study import study_identity

    path = Path(run_dir) / "lock.json"
    if not path.is_file():
        return []
    try:
        lock = read_lock(path)
    except SpecError:
        return []  # verify names a damaged lock; nothing to compare here
    out: list[CodeChange] = []
    for code in lock.code:
        group, _, name = code.name.partition(":")
        if group not in ("graders", "fixtures"):
            continue  # an adapter's own code is the system under test, not its scoring
        try:
            package, digest = code_identity(_registry.load(group, name))  # type: ignore[arg-type]
        except Exception:
            # Not installed: nothing of it scores today (the report reads the records'
            # verdicts and says what is missing), so nothing is re-scored either.
            continue
        if digest != code.sha256:
            out.append(CodeChange(code.name, f"python:{package}", code.sha256, digest))
    if lock.study is not None:
        try:
            now = study_identity(lock.study.name).sha256
        except Exception:
            return out  # a study gone: its part is "not shown", with what is missing
        if now != lock.study.sha256:
            where = f"python:{lock.study.package}"
            out.append(CodeChange(f"study:{lock.study.name}", where, lock.study.sha256, now))
    return out
