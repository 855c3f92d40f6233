"""``materialize`` and friends: the user's repository is never written, a hostile config
cannot change the checked-out bytes, and a frozen worktree's drift is found and named."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from helpers.revision import Repo, git_env, minirt, tree_snapshot
from pairbench.source import (
    Production,
    SourceError,
    Worktree,
    _checkout,
    freeze_readonly,
    materialize,
    overlay_harness,
    pin,
    production_manifest,
    rehash,
    remove_worktree,
    require_no_drift,
)
from pairbench.source._errors import SourceDrift
from pairbench.spec._revision import Harness

PRODUCTION = Production(include=["minirt/**", "pyproject.toml"], exclude=["minirt/tests/**"])


def _worktrees(cache: Path) -> list[str]:
    done = subprocess.run(
        ["git", f"--git-dir={cache}", "worktree", "list", "--porcelain"],
        env=git_env(cache.parent), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line for line in done.stdout.splitlines() if line.startswith("worktree ")]


def _dirty(repo: Repo) -> None:
    """A stash, a staged file, an uncommitted edit, an untracked and an ignored file."""
    repo.write("minirt/loop.py", "stashed = True\n")
    repo.git("stash", "push", "--quiet")
    repo.write("minirt/staged.py", "staged = True\n")
    repo.git("add", "minirt/staged.py")
    repo.write("minirt/loop.py", "edited = True\n")
    repo.write("untracked.txt", "untracked\n")
    repo.write(".gitignore", "*.log\n")
    repo.write("ignored.log", "ignored\n")


def test_a_dirty_user_repository_is_byte_identical_afterwards(tmp_path: Path) -> None:
    repo, base = minirt(tmp_path / "minirt")
    repo.write("minirt/loop.py", "def run():\n    return 2\n")
    candidate = repo.commit("candidate")
    _dirty(repo)
    before = tree_snapshot(repo.path)
    assert any(p.startswith(".git/refs/stash") or p == ".git/logs/refs/stash" for p in before)

    commits = {"baseline": pin(repo.path, "main~1"), "candidate": pin(repo.path, "main")}
    assert commits == {"baseline": base, "candidate": candidate}
    manifest = production_manifest(repo.path, base, PRODUCTION.include, PRODUCTION.exclude)
    cache = tmp_path / "work" / "cache.git"
    trees = [
        materialize(repo.path, commit, tmp_path / "work" / arm, cache, PRODUCTION)
        for arm, commit in commits.items()
    ]
    assert trees[0].manifest == manifest
    assert (Path(trees[1].path) / "minirt" / "loop.py").read_text() == "def run():\n    return 2\n"
    for tree in trees:
        remove_worktree(tree)

    assert tree_snapshot(repo.path) == before
    assert _worktrees(cache) == [f"worktree {cache}"]  # the bare clone itself, nothing else
    assert not (tmp_path / "work" / "baseline").exists()


def test_a_commit_no_ref_reaches_is_fetched_into_the_cache(tmp_path: Path) -> None:
    repo, base = minirt(tmp_path / "minirt")
    cache = tmp_path / "cache.git"
    remove_worktree(materialize(repo.path, base, tmp_path / "first", cache, PRODUCTION))
    repo.write("minirt/loop.py", "x = 'lost'\n")
    lost = repo.commit("then reset away")
    repo.git("reset", "--hard", "--quiet", base)  # only the reflog knows it now
    tree = materialize(repo.path, lost, tmp_path / "lost", cache, PRODUCTION)
    try:
        assert (Path(tree.path) / "minirt" / "loop.py").read_text() == "x = 'lost'\n"
    finally:
        remove_worktree(tree)
    with pytest.raises(SourceError, match=f"commit {'1' * 40} is not in the repository"):
        materialize(repo.path, "1" * 40, tmp_path / "none", cache, PRODUCTION)


def test_a_harness_commit_made_after_the_clone_is_fetched(tmp_path: Path) -> None:
    # The harness commit is no arm's commit, and was made after the private clone: the
    # overlay fetches it instead of failing with "not a tree object".
    repo, base = minirt(tmp_path / "minirt")
    cache = tmp_path / "cache.git"
    tree = materialize(repo.path, base, tmp_path / "arm", cache, PRODUCTION)
    try:
        repo.write("harness/accept.py", "print('reviewed')\n")
        harness = repo.commit("the reviewed harness")
        written = overlay_harness(tree, Harness(commit=harness, paths=["harness/**"]), repo.path)
        assert "harness/accept.py" in written
        assert (Path(tree.path) / "harness" / "accept.py").read_text() == "print('reviewed')\n"
        with pytest.raises(SourceError, match=r"is not in the repository\. Fix: pin a commit"):
            overlay_harness(tree, Harness(commit="2" * 40, paths=["harness/**"]), repo.path)
    finally:
        remove_worktree(tree)


def _hostile_home(tmp_path: Path) -> Path:
    home = tmp_path / "hostile-home"
    hooks = home / "hooks"
    hooks.mkdir(parents=True)
    for hook in ("post-checkout", "reference-transaction", "pre-commit", "post-index-change"):
        (hooks / hook).write_text("#!/bin/sh\nexit 1\n")
        (hooks / hook).chmod(0o755)
    (home / ".gitconfig").write_text(
        "[commit]\n\tgpgsign = true\n"
        f"[core]\n\thooksPath = {hooks}\n\tautocrlf = true\n\teol = crlf\n"
        '[filter "upper"]\n\tsmudge = tr a-z A-Z\n\trequired = true\n'
    )
    return home


def test_a_hostile_git_config_and_attributes_cannot_change_the_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _ = minirt(tmp_path / "minirt")
    repo.write(".gitattributes", "* text=auto eol=crlf\n*.py filter=upper\n")
    repo.write("minirt/loop.py", "def run():\n    return 'crlf?'\n")
    commit = repo.commit("attributes that rewrite text")
    home = _hostile_home(tmp_path)
    # The hostile setup bites plain git: its hooks fail a clone, and with hooks off its
    # attributes and filter rewrite the checkout (CRLF line ends, upper-cased Python).
    env = {"PATH": git_env(home)["PATH"], "HOME": str(home)}
    clone = ["git", "clone", "--quiet", str(repo.path)]
    hooked = subprocess.run([*clone, str(tmp_path / "a")], env=env, capture_output=True)
    assert hooked.returncode != 0
    subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *clone[1:], str(tmp_path / "b")],
        env=env, capture_output=True, check=True,
    )  # fmt: skip
    rewritten = (tmp_path / "b" / "minirt" / "loop.py").read_bytes()
    assert rewritten == b"DEF RUN():\r\n    RETURN 'CRLF?'\r\n"

    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))  # not inherited either
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    tree = materialize(repo.path, commit, tmp_path / "wt", tmp_path / "cache.git", PRODUCTION)
    try:
        on_disk = (Path(tree.path) / "minirt" / "loop.py").read_bytes()
        assert on_disk == b"def run():\n    return 'crlf?'\n"  # the blob's bytes
        assert rehash(Path(tree.path), tree.manifest) == []
    finally:
        remove_worktree(tree)


def test_a_checkout_whose_bytes_differ_from_the_blobs_is_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Take away the cache's neutral attributes: the committed eol=crlf then rewrites
    # text on checkout (git status still calls it clean), and the byte check must catch it.
    monkeypatch.setattr(_checkout, "NEUTRAL_ATTRIBUTES", "")
    repo, _ = minirt(tmp_path / "minirt")
    repo.write(".gitattributes", "minirt/loop.py text eol=crlf\n")
    commit = repo.commit("eol=crlf")
    with pytest.raises(
        SourceError, match=r"differ from the commit's blobs: minirt/loop.py \(content\)"
    ):
        materialize(repo.path, commit, tmp_path / "wt", tmp_path / "cache.git", PRODUCTION)
    assert not (tmp_path / "wt").exists()  # refused and removed


def _writable(path: Path) -> bool:
    return bool(path.lstat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def test_drift_after_freezing_is_found_and_named(tmp_path: Path) -> None:
    repo, base = minirt(tmp_path / "minirt")
    tree: Worktree = materialize(
        repo.path, base, tmp_path / "wt", tmp_path / "cache.git", PRODUCTION
    )
    root = Path(tree.path)
    try:
        freeze_readonly(root)
        everything = [root, *root.rglob("*")]
        assert not any(_writable(p) for p in everything if not p.is_symlink())
        require_no_drift(root, tree.manifest)

        loop = root / "minirt" / "loop.py"
        loop.chmod(0o644)
        loop.write_text("def run():\n    return 'drifted'\n")
        (root / "minirt").chmod(0o755)
        (root / "minirt" / "planted.py").write_text("import os\n")
        (root / "minirt" / "tests" / "scratch.py").write_text("")  # excluded: not drift
        (root / "minirt" / "tool.sh").chmod(0o444)  # its exec bit gone
        found = [(d.path, d.kind) for d in rehash(root, tree.manifest)]
        assert found == [
            ("minirt/loop.py", "content"),
            ("minirt/planted.py", "extra"),
            ("minirt/tool.sh", "mode"),
        ]
        (root / "pyproject.toml").unlink()
        with pytest.raises(
            SourceDrift, match=r"minirt/loop.py \(content\).*pyproject.toml \(missing\)"
        ) as caught:
            require_no_drift(root, tree.manifest)
        assert "pyproject.toml (missing)" in caught.value.paths
    finally:
        remove_worktree(tree)
    assert not root.exists()
    assert _worktrees(tmp_path / "cache.git") == [f"worktree {tmp_path / 'cache.git'}"]


def test_materialize_refuses_a_branch_name_and_an_existing_folder(tmp_path: Path) -> None:
    repo, base = minirt(tmp_path / "minirt")
    with pytest.raises(ValueError, match="`pairbench source pin main`"):
        materialize(repo.path, "main", tmp_path / "wt", tmp_path / "cache.git", PRODUCTION)
    (tmp_path / "taken").mkdir()
    with pytest.raises(SourceError, match="already exists"):
        materialize(repo.path, base, tmp_path / "taken", tmp_path / "cache.git", PRODUCTION)
