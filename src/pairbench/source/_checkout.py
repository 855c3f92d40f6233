"""Materialize a commit: a private bare clone, a detached worktree of it, checked byte by byte.

The user's repository is only read (``git clone --no-local`` and ``git fetch`` run its
``upload-pack``), never checked out, locked or configured. Everything written lives in
``cache_dir`` (the bare clone) and ``dest`` (the worktree).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pairbench._model import Frozen
from pairbench.source._drift import rehash, restore_writable
from pairbench.source._errors import SourceError
from pairbench.source._git import GitFailed, isolated_git
from pairbench.source._manifest import Manifest, production_manifest
from pairbench.source._pin import repository
from pairbench.spec._revision import Commit, Production, check_commit

# The cache's info/attributes outranks every .gitattributes in a tree: no eol rewrite, no
# smudge filter (LFS), no $Id$ expansion, no re-encoding. A checkout then holds the blobs'
# bytes, which is what the production hash is made of, instead of being refused for a
# committed `* text=auto eol=crlf`. A checkout that still differs is refused, named.
NEUTRAL_ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding\n"


class Worktree(Frozen):
    """One arm's materialized revision."""

    commit: Commit
    """The commit checked out (detached), verified as the worktree's HEAD."""
    path: str
    """The worktree's folder (absolute)."""
    cache: str
    """The private bare clone it belongs to (``git --git-dir`` for it)."""
    manifest: Manifest
    """The production manifest of ``commit``, which its files were checked against."""

    @property
    def manifest_sha256(self) -> str:
        """The production byte hash (``pbprod/1``) of the checked-out commit."""
        return self.manifest.sha256


def private_clone(repo: Path, commit: str, cache_dir: Path) -> Path:
    """A bare clone of ``repo`` at ``cache_dir`` holding ``commit``: made, reused or fetched.

    **Usage**::

        cache = private_clone(Path("../minirt"), commit, runs / ".work" / "cache.git")
    """
    source = repository(repo)
    cache = Path(cache_dir).resolve()
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        isolated_git(
            ["clone", "--bare", "--no-local", "--quiet", "--", str(source), str(cache)],
            what=f"{repo}: cannot clone it into {cache}",
        )
    elif not (cache / "HEAD").is_file() or not (cache / "objects").is_dir():
        raise SourceError(
            f"{cache}: exists but is not a bare git repository. Fix: remove it or name "
            "another cache folder"
        )
    (cache / "info").mkdir(exist_ok=True)
    (cache / "info" / "attributes").write_text(NEUTRAL_ATTRIBUTES, encoding="ascii")
    if not _has_commit(cache, commit):
        # Protocol v2 serves any reachable object by id: a detached or stashed commit too.
        isolated_git(
            ["fetch", "--quiet", "--no-tags", "--", str(source), f"+{commit}:refs/pins/{commit}"],
            git_dir=cache,
            what=(
                f"{repo}: commit {commit} is not in the repository. Fix: pin a commit that "
                f"exists there (pairbench source pin REF --repo {repo})"
            ),
        )
    return cache


def _has_commit(cache: Path, commit: str) -> bool:
    try:
        isolated_git(["cat-file", "-e", f"{commit}^{{commit}}"], git_dir=cache)
    except GitFailed:
        return False
    return True


def materialize(
    repo: Path, commit: str, dest: Path, cache_dir: Path, production: Production
) -> Worktree:
    """Check ``commit`` of ``repo`` out at ``dest`` (a detached worktree of a private clone)
    and verify it: HEAD, a clean status, and every production file's bytes and exec bit.

    Refuses (``SourceError``, naming the file) a checkout whose bytes differ from the blobs.

    **Usage**::

        tree = materialize(Path("../minirt"), commit, runs / ".work" / run_id / "baseline",
                           runs / ".work" / "cache.git", source.production)
        try:
            ...                      # build, freeze_readonly, trials, require_no_drift
        finally:
            remove_worktree(tree)
    """
    check_commit(commit)
    dest = Path(dest).absolute()
    if dest.exists():
        raise SourceError(f"{dest}: already exists. Fix: materialize into a new folder")
    cache = private_clone(repo, commit, cache_dir)
    manifest = production_manifest(cache, commit, production.include, production.exclude)
    dest.parent.mkdir(parents=True, exist_ok=True)
    isolated_git(
        ["worktree", "add", "--detach", "--quiet", "--", str(dest), commit],
        git_dir=cache,
        what=f"{dest}: cannot check out {commit}",
    )
    tree = Worktree(commit=commit, path=str(dest), cache=str(cache), manifest=manifest)
    try:
        _verify_checkout(tree)
    except BaseException:
        remove_worktree(tree)
        raise
    return tree


def _verify_checkout(tree: Worktree) -> None:
    dest = Path(tree.path)
    head = isolated_git(["rev-parse", "HEAD"], cwd=dest, what=f"{dest}: no HEAD")
    if head.decode("ascii").strip() != tree.commit:
        raise SourceError(f"{dest}: HEAD is {head.decode().strip()}, not {tree.commit}")
    status = isolated_git(
        ["status", "--porcelain", "--ignored", "-z", "--untracked-files=all"], cwd=dest
    )
    if status:
        names = [s[3:].decode("utf-8", "replace") for s in status.split(b"\0") if s]
        raise SourceError(f"{dest}: the fresh checkout is not clean: {', '.join(names[:20])}")
    drift = rehash(dest, tree.manifest)
    if drift:
        raise SourceError(
            f"{dest}: checked-out bytes differ from the commit's blobs: "
            f"{'; '.join(str(d) for d in drift[:20])}. A filter or attribute rewrote them; "
            "Fix: remove the filter (e.g. Git LFS) from production paths"
        )


def remove_worktree(tree: Worktree) -> None:
    """Remove a worktree (frozen or not) and its record in the cache: nothing is left behind.

    **Usage**::

        remove_worktree(tree)    # in a finally, after the arm's last campaign
    """
    dest, cache = Path(tree.path), Path(tree.cache)
    if dest.exists():
        restore_writable(dest)
        try:
            isolated_git(
                ["worktree", "remove", "--force", "--force", "--", str(dest)], git_dir=cache
            )
        except GitFailed:
            shutil.rmtree(dest, ignore_errors=True)  # prune below drops its record
    isolated_git(["worktree", "prune"], git_dir=cache, what=f"{cache}: cannot prune worktrees")
