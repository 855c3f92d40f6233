"""What differs between arms: the treatment (production paths) and harness paths to flag."""

from __future__ import annotations

from pathlib import Path

from pairbench.source._git import git_dir_of, isolated_git
from pairbench.source._manifest import Manifest, ManifestChange, diff_manifests
from pairbench.spec._glob import PathFilter


def treatment_paths(baseline: Manifest, candidate: Manifest) -> list[str]:
    """The production paths whose bytes or mode differ between two arms (run.json's treatment).

    **Usage**::

        treatment_paths(trees["baseline"].manifest, trees["candidate"].manifest)
        # ["minirt/dispatch.py", "minirt/paths.py"]
    """
    return list(dict.fromkeys(c.path for c in diff_manifests(baseline, candidate)))


def harness_changes(
    repo: Path, base_commit: str, other_commit: str, harness_paths: list[str]
) -> list[ManifestChange]:
    """Harness paths that ``other_commit`` changes relative to ``base_commit`` (to be flagged:
    every arm still runs the harness commit's files, so such a change is not run).

    ``repo`` is the user's repository or the private cache; both commits must be in it.

    **Usage**::

        harness_changes(cache, source.harness.commit, arm.commit, source.harness.paths)
        # [ManifestChange(path="harness/build.py", change="content")]
    """
    selected = PathFilter(harness_paths)
    raw = isolated_git(
        ["diff-tree", "-r", "-z", "--no-renames", "--raw", "--end-of-options",
         base_commit, other_commit],
        git_dir=git_dir_of(repo),
        what=f"{repo}: cannot compare {base_commit[:12]} with {other_commit[:12]}",
    )  # fmt: skip
    fields = raw.split(b"\0")
    changes: list[ManifestChange] = []
    # -z --raw: ":<old mode> <new mode> <old id> <new id> <status>" NUL "<path>" NUL
    for meta, raw_path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_id, new_id, status = meta[1:].decode("ascii").split(" ")
        path = raw_path.decode("utf-8", "surrogateescape")
        if not selected(path):
            continue
        if status == "A":
            changes.append(ManifestChange(path=path, change="added"))
        elif status == "D":
            changes.append(ManifestChange(path=path, change="removed"))
        else:
            if old_id != new_id:
                changes.append(ManifestChange(path=path, change="content"))
            if old_mode != new_mode:
                changes.append(ManifestChange(path=path, change="mode"))
    return changes
