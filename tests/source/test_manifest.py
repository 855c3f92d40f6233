"""The production byte hash (pbprod/1): equal to an independent ``git archive`` computation,
kept by a tests-only commit, changed (and named) by a byte or an exec bit."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from helpers.revision import Repo, git_env, minirt
from pairbench.source import (
    ManifestChange,
    SourceError,
    diff_manifests,
    harness_changes,
    production_manifest,
    treatment_paths,
)

INCLUDE = ["minirt/**", "pyproject.toml"]
EXCLUDE = ["minirt/tests/**"]


def _archive_hash(repo: Repo, commit: str) -> tuple[list[str], str]:
    """The paths and pbprod/1 hash by another road: git's own pathspecs select, ``git archive``
    writes the bytes and modes, tarfile reads them, and the canonical JSON is written here."""
    specs = [f":(glob){p}" for p in INCLUDE] + [f":(glob,exclude){p}" for p in EXCLUDE]
    tar_bytes = subprocess.run(
        ["git", "archive", "--format=tar", commit, "--", *specs],
        cwd=repo.path, env=git_env(repo.home), capture_output=True, check=True,
    ).stdout  # fmt: skip
    entries = []
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        for member in tar.getmembers():
            if member.issym():
                mode, data = "120000", member.linkname.encode("utf-8")
            elif member.isfile():
                extracted = tar.extractfile(member)
                assert extracted is not None
                mode, data = ("100755" if member.mode & 0o100 else "100644"), extracted.read()
            else:
                continue  # folders
            entries.append(
                {"path": member.name, "mode": mode, "sha256": hashlib.sha256(data).hexdigest()}
            )
    entries.sort(key=lambda e: e["path"].encode("utf-8"))
    text = json.dumps(entries, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return [e["path"] for e in entries], hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_hash_equals_an_independent_git_archive_computation(tmp_path: Path) -> None:
    repo, commit = minirt(tmp_path / "minirt")
    manifest = production_manifest(repo.path, commit, INCLUDE, EXCLUDE)
    paths, expected = _archive_hash(repo, commit)
    assert [e.path for e in manifest.entries] == paths
    assert "minirt/data/é.txt" in paths and "minirt/tests/test_loop.py" not in paths
    assert manifest.sha256 == expected
    modes = {e.path: e.mode for e in manifest.entries}
    assert modes["minirt/tool.sh"] == "100755" and modes["minirt/link.py"] == "120000"
    link = next(e for e in manifest.entries if e.path == "minirt/link.py")
    assert link.sha256 == hashlib.sha256(b"loop.py").hexdigest()  # the target's text


def test_a_tests_only_commit_keeps_the_hash_and_a_byte_or_exec_bit_changes_it(
    tmp_path: Path,
) -> None:
    repo, base = minirt(tmp_path / "minirt")
    repo.write("minirt/tests/test_loop.py", "def test():\n    assert 1 == 1\n")
    repo.write("docs/index.md", "# more docs\n")
    tests_only = repo.commit("tests only")
    repo.write("minirt/loop.py", "def run():\n    return 2\n")
    byte = repo.commit("one byte")
    repo.write("minirt/loop.py", "def run():\n    return 2\n", executable=True)
    exec_bit = repo.commit("exec bit")

    def hashed(commit: str) -> str:
        return production_manifest(repo.path, commit, INCLUDE, EXCLUDE).sha256

    assert hashed(tests_only) == hashed(base)
    assert len({hashed(base), hashed(byte), hashed(exec_bit)}) == 3
    manifests = {
        c: production_manifest(repo.path, c, INCLUDE, EXCLUDE) for c in (base, byte, exec_bit)
    }
    assert diff_manifests(manifests[base], manifests[byte]) == [
        ManifestChange(path="minirt/loop.py", change="content")
    ]
    assert diff_manifests(manifests[byte], manifests[exec_bit]) == [
        ManifestChange(path="minirt/loop.py", change="mode")
    ]
    assert treatment_paths(manifests[base], manifests[exec_bit]) == ["minirt/loop.py"]
    assert treatment_paths(manifests[base], manifests[base]) == []


def test_added_and_removed_files_are_named(tmp_path: Path) -> None:
    repo, base = minirt(tmp_path / "minirt")
    (repo.path / "minirt" / "tool.sh").unlink()
    repo.write("minirt/new.py", "x = 1\n")
    other = repo.commit("add and remove")
    changes = diff_manifests(
        production_manifest(repo.path, base, INCLUDE, EXCLUDE),
        production_manifest(repo.path, other, INCLUDE, EXCLUDE),
    )
    assert [(c.path, c.change) for c in changes] == [
        ("minirt/new.py", "added"),
        ("minirt/tool.sh", "removed"),
    ]


def test_a_harness_change_in_an_arms_commit_is_named(tmp_path: Path) -> None:
    repo, base = minirt(tmp_path / "minirt")
    repo.write("harness/build.py", "print('changed')\n", executable=True)
    repo.write("harness/extra.py", "")
    repo.write("minirt/loop.py", "def run():\n    return 3\n")
    candidate = repo.commit("candidate edits the harness")
    changes = harness_changes(repo.path, base, candidate, ["harness/**"])
    assert [(c.path, c.change) for c in changes] == [
        ("harness/build.py", "content"),
        ("harness/build.py", "mode"),
        ("harness/extra.py", "added"),
    ]
    assert harness_changes(repo.path, base, base, ["harness/**"]) == []


def test_an_empty_selection_is_an_error(tmp_path: Path) -> None:
    repo, commit = minirt(tmp_path / "minirt")
    with pytest.raises(SourceError, match=r"select no file.*anchored"):
        production_manifest(repo.path, commit, ["*.py"])  # top-level only: there is none


def test_a_submodule_under_production_is_refused(tmp_path: Path) -> None:
    repo, commit = minirt(tmp_path / "minirt")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{commit},minirt/vendored")
    repo.git("commit", "--quiet", "-m", "submodule")
    with_sub = repo.git("rev-parse", "HEAD")
    with pytest.raises(SourceError, match="minirt/vendored is a submodule"):
        production_manifest(repo.path, with_sub, INCLUDE, EXCLUDE)
    kept = production_manifest(repo.path, with_sub, INCLUDE, [*EXCLUDE, "minirt/vendored"])
    assert kept.sha256 == production_manifest(repo.path, commit, INCLUDE, EXCLUDE).sha256


def test_a_commit_not_in_the_repository_is_an_error(tmp_path: Path) -> None:
    repo, _ = minirt(tmp_path / "minirt")
    with pytest.raises(SourceError, match="cannot read the tree"):
        production_manifest(repo.path, "0" * 40, INCLUDE)
