"""The identities of arms that are git revisions (``repo`` sources), for run.json.

Per arm: its commit, the production byte hash of that commit's git tree (``pbprod/1``: the
bytes of the arm's production files, whatever is on any disk), and any harness path its
commit changes (flagged: every arm runs the harness commit's files, so such a change is not
what runs). Between arms: the production paths that differ, which is the treatment.
"""

from __future__ import annotations

from typing import Any

from pairbench.spec._load import LoadedExperiment


def revision_identities(loaded: LoadedExperiment) -> dict[str, Any]:
    """``{"revisions": {arm: ...}, "treatment": {...}}``, or ``{}`` when no arm names a
    commit (so the identities of every other experiment are as they were)."""
    from pairbench.source import diff_manifests, harness_changes, production_manifest

    exp = loaded.experiment
    arms: dict[str, Any] = {}
    manifests = {}
    for arm in exp.arms:
        found = exp.revision_of(arm)
        if found is None:
            continue
        name, source, wanted = found
        assert source.repo is not None and source.production is not None
        assert source.harness is not None  # a 'repo' source validates with both
        repo = (loaded.root / source.repo).resolve()
        production = source.production
        manifest = production_manifest(repo, wanted.commit, production.include, production.exclude)
        manifests[arm] = manifest
        harness = source.harness
        # An arm's tree may lack the harness (an older commit): nothing of it would run, so
        # only harness files the arm's commit adds or changes are flagged.
        changed = [
            f"{c.path} ({c.change})"
            for c in harness_changes(repo, harness.commit, wanted.commit, harness.paths)
            if c.change != "removed"
        ]
        arms[arm] = {
            "source": name,
            "commit": wanted.commit,
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
