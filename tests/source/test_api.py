"""The public names of ``pairbench.source``: a change to them is a deliberate edit here."""

from __future__ import annotations

from pathlib import Path

import pytest

import pairbench.source as source

PUBLIC = [
    "ArmRevision", "BuildFailed", "BuildRecord", "BuildSpec", "Drift", "Harness", "Manifest",
    "ManifestChange", "ManifestEntry", "PathFilter", "Production", "RevisionSource",
    "SourceDrift", "SourceError", "Worktree", "build", "check_commit", "diff_manifests",
    "freeze_readonly", "harness_changes", "isolated_git", "materialize", "overlay_harness", "pin",
    "private_clone", "production_manifest", "rehash", "remove_worktree", "require_no_drift",
    "treatment_paths",
]  # fmt: skip


def test_the_public_names_are_exactly_these_and_documented() -> None:
    assert source.__all__ == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(source, name).__doc__, f"{name} has no docstring"


def test_a_missing_git_is_one_error_saying_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(source.SourceError, match=r"git is not on PATH.*install git"):
        source.pin(tmp_path, "main")
