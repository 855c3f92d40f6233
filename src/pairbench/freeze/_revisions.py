"""The identities of arms that are git revisions (``repo`` sources), for run.json.

Per arm: its commit, the production byte hash of that commit's git tree (``pbprod/1``: the
bytes of the arm's production files, whatever is on any disk), and any harness path its
commit changes (flagged: every arm runs the harness commit's files, so such a change is not
what runs). Between arms: the production paths that differ, which is the treatment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from pairbench.spec._load import LoadedExperiment
from pairbench.spec._revision import BuildSpec, Harness, Production, Proof


class RevisionArm(NamedTuple):
    """An arm that runs a commit of a ``repo`` source, with what that source declares."""

    arm: str
    source: str
    """The ``sources`` entry."""
    commit: str
    repo: Path
    """The repository, absolute."""
    production: Production
    harness: Harness
    build: BuildSpec | None
    proof: Proof | None


def revision_arms(loaded: LoadedExperiment) -> list[RevisionArm]:
    """Every arm naming a commit, in declared order (``[]`` for most experiments)."""
    exp = loaded.experiment
    out = []
    for arm in exp.arms:
        found = exp.revision_of(arm)
        if found is None:
            continue
        name, source, wanted = found
        # A 'repo' source validates only with a repo, production and harness.
        assert source.repo is not None and source.production is not None
        assert source.harness is not None
        repo = (loaded.root / source.repo).resolve()
        out.append(
            RevisionArm(
                arm, name, wanted.commit, repo, source.production, source.harness,
                source.build, source.proof,
            )
        )  # fmt: skip
    return out


def revision_identities(loaded: LoadedExperiment) -> dict[str, Any]:
    """``{"revisions": {arm: ...}, "treatment": {...}}``, or ``{}`` when no arm names a
    commit (so the identities of every other experiment are as they were)."""
    from pairbench.source import diff_manifests, harness_changes, production_manifest

    arms: dict[str, Any] = {}
    manifests = {}
    for r in revision_arms(loaded):
        include, exclude = r.production.include, r.production.exclude
        manifest = production_manifest(r.repo, r.commit, include, exclude)
        manifests[r.arm] = manifest
        harness = r.harness
        # An arm's tree may lack the harness (an older commit): nothing of it would run, so
        # only harness files the arm's commit adds or changes are flagged.
        changed = [
            f"{c.path} ({c.change})"
            for c in harness_changes(r.repo, harness.commit, r.commit, harness.paths)
            if c.change != "removed"
        ]
        arms[r.arm] = {
            "source": r.source,
            "commit": r.commit,
            "production_scheme": manifest.scheme,
            "production_sha256": manifest.sha256,
            "production_files": len(manifest.entries),
            "harness_commit": harness.commit,
            "harness_paths_changed": changed,
        }
    if not arms:
        return {}
    reference = next(iter(manifests))
    differ = {
        arm: [f"{c.path} ({c.change})" for c in diff_manifests(manifests[reference], m)]
        for arm, m in manifests.items()
        if arm != reference
    }
    return {"revisions": arms, "treatment": {"reference_arm": reference, "paths": differ}}
