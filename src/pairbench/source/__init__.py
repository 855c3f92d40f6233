"""Arms that are git revisions: pin, materialize, hash, build, freeze and compare them.

**Usage**::

    commit = pin(Path("../minirt"), "main")
    tree = materialize(repo, commit, work / "baseline", work / "cache.git", source.production)
    try:
        record = build(Path(tree.path), source.build, work / "baseline.venv")
        freeze_readonly(Path(tree.path))
        ...                                            # trials
        require_no_drift(Path(tree.path), tree.manifest)
    finally:
        remove_worktree(tree)
"""

from pairbench.source._build import BuildRecord, build
from pairbench.source._checkout import Worktree, materialize, private_clone, remove_worktree
from pairbench.source._drift import Drift, freeze_readonly, rehash, require_no_drift
from pairbench.source._errors import BuildFailed, SourceDrift, SourceError
from pairbench.source._git import isolated_git
from pairbench.source._harness import overlay_harness
from pairbench.source._manifest import (
    Manifest,
    ManifestChange,
    ManifestEntry,
    diff_manifests,
    production_manifest,
)
from pairbench.source._pin import pin
from pairbench.source._treatment import harness_changes, treatment_paths
from pairbench.spec._glob import PathFilter
from pairbench.spec._revision import (
    ArmRevision,
    BuildSpec,
    Harness,
    Production,
    RevisionSource,
    check_commit,
)

__all__ = [
    "ArmRevision",
    "BuildFailed",
    "BuildRecord",
    "BuildSpec",
    "Drift",
    "Harness",
    "Manifest",
    "ManifestChange",
    "ManifestEntry",
    "PathFilter",
    "Production",
    "RevisionSource",
    "SourceDrift",
    "SourceError",
    "Worktree",
    "build",
    "check_commit",
    "diff_manifests",
    "freeze_readonly",
    "harness_changes",
    "isolated_git",
    "materialize",
    "overlay_harness",
    "pin",
    "private_clone",
    "production_manifest",
    "rehash",
    "remove_worktree",
    "require_no_drift",
    "treatment_paths",
]
