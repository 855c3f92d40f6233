"""Every arm runs the pinned harness: after an arm's commit is checked out, its files under
the harness paths are replaced by the harness commit's. A candidate that edits the harness
then still runs the reviewed harness; run.json flags the edit (``harness_changes``)."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

from pairbench.source._checkout import Worktree, private_clone
from pairbench.source._git import isolated_git
from pairbench.spec._glob import PathFilter
from pairbench.spec._revision import Harness


def overlay_harness(tree: Worktree, harness: Harness, repo: Path | None = None) -> list[str]:
    """Replace ``tree``'s harness files by ``harness.commit``'s (before the tree is frozen);
    returns the paths written, sorted. With ``repo``, a harness commit the private clone does
    not hold yet (made after it was cloned, and no arm's commit) is fetched first.

    **Usage**::

        written = overlay_harness(tree, source.harness, repo)   # ["harness/build.py", ...]
    """
    if repo is not None:
        private_clone(repo, harness.commit, Path(tree.cache))
    selected = PathFilter(harness.paths)
    root = Path(tree.path)
    for folder, _dirs, names in os.walk(root):
        if ".git" in Path(folder).relative_to(root).parts:
            continue
        for name in names:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if rel != ".git" and selected(rel):
                path.unlink()
    archive = isolated_git(
        ["archive", "--format=tar", harness.commit], git_dir=Path(tree.cache),
        what=f"{tree.cache}: cannot read harness commit {harness.commit[:12]}",
    )  # fmt: skip
    written = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if not (member.isfile() or member.issym()) or not selected(member.name):
                continue
            target = root / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            if member.issym():
                target.symlink_to(member.linkname)
            else:
                source = tar.extractfile(member)
                assert source is not None  # a regular file has content
                with source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out)
                target.chmod(0o755 if member.mode & 0o111 else 0o644)
            written.append(member.name)
    return sorted(written)
