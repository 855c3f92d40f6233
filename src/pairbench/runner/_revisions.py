"""Arms that are git revisions, made ready before the first attempt and checked around each.

For every arm naming a commit of a ``repo`` source: the commit is checked out from a private
bare clone (``$PAIRBENCH_CACHE/sources``; the user's repository is only read) into the run's
``work/_sources/<arm>/tree``, verified byte for byte, given the pinned harness's files, built
(if the source declares a build) into ``work/_sources/<arm>/env``, and frozen read-only. Its
production manifest and build record are stored in ``sources/<arm>/`` of the run.

The agent finds its revision in ``PAIRBENCH_SOURCE`` (the frozen tree),
``PAIRBENCH_SOURCE_ENV`` (the build's folder) and ``PAIRBENCH_SOURCE_COMMIT``. Before and after
every attempt of the arm the tree is re-hashed against its manifest: drift (an edited, added,
removed or re-moded production file) makes the attempt infra, naming the paths; the retry
meets the same drift, so the run stops, as a second infra failure does.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench.spec._load import LoadedExperiment
from pairbench.store._atomic import write_atomic
from pairbench.store._run_dir import RunDir

if TYPE_CHECKING:  # pairbench.source loads only for runs that have revision arms
    from pairbench.source import Worktree


@dataclass(frozen=True)
class Revision:
    """One arm's revision, ready to run."""

    arm: str
    commit: str
    tree: Path
    """The frozen worktree."""
    env_dir: Path
    """The build's environment folder (empty when the source declares no build)."""
    worktree: Worktree
    """The checkout (its manifest, its cache), for re-hashing and removal."""

    def env(self) -> dict[str, str]:
        """What the arm's agent gets in its environment."""
        return {
            "PAIRBENCH_SOURCE": str(self.tree),
            "PAIRBENCH_SOURCE_ENV": str(self.env_dir),
            "PAIRBENCH_SOURCE_COMMIT": self.commit,
        }

    def drift(self) -> list[str]:
        """The production paths that differ from the manifest now (``[]``: none)."""
        from pairbench.source import rehash

        return [str(d) for d in rehash(self.tree, self.worktree.manifest)]


def _cache_for(repo: Path) -> Path:
    """The private bare clone of ``repo``, one per repository path, outside the run."""
    from pairbench.model._cache import cache_root

    key = hashlib.sha256(str(repo).encode("utf-8")).hexdigest()[:16]
    return cache_root() / "sources" / f"{repo.name}-{key}.git"


def prepare_revisions(loaded: LoadedExperiment, run_dir: RunDir) -> dict[str, Revision]:
    """Check out, verify, build and freeze every revision arm's commit; ``{}`` when no arm
    names a commit. Raises ``SourceError`` (or ``BuildFailed``) naming the arm's problem;
    what was prepared is removed first."""
    from pairbench.source import (
        build,
        freeze_readonly,
        materialize,
        overlay_harness,
        remove_worktree,
    )

    exp = loaded.experiment
    ready: dict[str, Revision] = {}
    try:
        for arm in exp.arms:
            found = exp.revision_of(arm)
            if found is None:
                continue
            _name, source, wanted = found
            assert source.repo is not None and source.production is not None
            assert source.harness is not None
            repo = (loaded.root / source.repo).resolve()
            base = run_dir.path / "work" / "_sources" / arm
            if base.exists():  # a resumed run: its earlier checkout is not trusted
                _remove_folder(base)
            tree_dir, env_dir = base / "tree", base / "env"
            tree = materialize(repo, wanted.commit, tree_dir, _cache_for(repo), source.production)
            ready[arm] = Revision(arm, wanted.commit, tree_dir, env_dir, tree)
            harness = overlay_harness(tree, source.harness)
            env_dir.mkdir(parents=True, exist_ok=True)
            record = None
            if source.build is not None:
                record = build(tree_dir, source.build, env_dir, log=base / "build.log")
            freeze_readonly(tree_dir)
            stored = run_dir.path / "sources" / arm
            stored.mkdir(parents=True, exist_ok=True)
            write_atomic(
                stored / "production-manifest.json",
                tree.manifest.model_dump_json(indent=2).encode("utf-8") + b"\n",
            )
            info: dict[str, object] = {
                "harness_commit": source.harness.commit,
                "harness_files": harness,
            }
            if record is not None:
                info["build"] = record.model_dump(mode="json")
            write_atomic(stored / "prepared.json", _json(info))
    except BaseException:
        for revision in ready.values():
            remove_worktree(revision.worktree)
        raise
    return ready


def release_revisions(revisions: dict[str, Revision]) -> None:
    """Remove the worktrees (write bits restored): the run keeps their manifests."""
    from pairbench.source import remove_worktree

    for revision in revisions.values():
        remove_worktree(revision.worktree)


def _remove_folder(folder: Path) -> None:
    from pairbench.source._drift import restore_writable

    restore_writable(folder)
    shutil.rmtree(folder)


def _json(value: object) -> bytes:
    import json

    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8")
