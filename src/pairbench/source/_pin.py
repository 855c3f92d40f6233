"""``pin``: a branch, tag or any ref of the user's repository, resolved to its commit."""

from __future__ import annotations

from pathlib import Path

from pairbench.source._errors import SourceError
from pairbench.source._git import GitFailed, isolated_git


def repository(repo: Path) -> Path:
    """``repo`` resolved, or a ``SourceError`` when it is not a folder."""
    path = Path(repo).expanduser().resolve()
    if not path.is_dir():
        raise SourceError(f"{repo}: no such folder. Fix: --repo names the git repository")
    return path


def pin(repo: Path, ref: str) -> str:
    """The 40-hex commit ``ref`` names in ``repo``; reads the repository, never writes it.

    **Usage**::

        pin(Path("../minirt"), "main")      # "3f2a...": write it as an arm's commit
        pin(Path("../minirt"), "v1.2^")     # any rev-parse expression naming a commit
    """
    path = repository(repo)
    if not ref or ref.startswith("-"):
        raise SourceError(f"{repo}: {ref!r} is not a ref. Fix: name a branch, tag or commit")
    try:
        out = isolated_git(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
            cwd=path,
        )
    except GitFailed as exc:
        if "not a git repository" in exc.stderr:
            raise SourceError(
                f"{repo}: not a git repository (its top folder). Fix: --repo names the "
                "repository's top folder"
            ) from None
        raise SourceError(
            f"{repo}: {ref!r} does not name a commit there. Fix: `git -C {repo} log "
            "--oneline` lists commits; name a branch, tag or commit that exists"
        ) from None
    commit = out.decode("ascii").strip()
    if len(commit) != 40:
        raise SourceError(
            f"{repo}: {ref!r} resolved to {commit!r}, not a 40-hex SHA-1 commit "
            "(SHA-256 repositories are not supported)"
        )
    return commit
