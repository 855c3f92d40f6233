"""make_example writes the pinned commits: here, and under a hostile machine (time zone,
locale, working folder, a user git config that signs, runs failing hooks, renames the
author, picks another default branch and rewrites line endings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pairbench.source import SourceError, isolated_git
from pairbench.studies.runtime_revision_ab import PINNED, make_example

_GENERATE = (
    "import json, sys; from pathlib import Path; "
    "from pairbench.studies.runtime_revision_ab import make_example; "
    "print(json.dumps(make_example(Path(sys.argv[1]), check=False).commits))"
)


def _hostile_home(home: Path) -> Path:
    """A HOME whose git config would change every commit, and hooks that record any run."""
    hooks = home / "hooks"
    hooks.mkdir(parents=True)
    marker = home / "hook-ran"
    for name in (
        "pre-commit",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "reference-transaction",
    ):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {marker}\nexit 1\n", encoding="utf-8")
        hook.chmod(0o755)
    template = home / "template" / "hooks"
    template.mkdir(parents=True)
    (template / "post-checkout").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Mallory\n\temail = mallory@example.invalid\n"
        "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = /bin/false\n"
        f"[core]\n\thooksPath = {hooks}\n\tautocrlf = true\n"
        f"[init]\n\tdefaultBranch = other\n\ttemplateDir = {template.parent}\n",
        encoding="utf-8",
    )
    return marker


def test_the_commits_are_the_pinned_ones(tmp_path: Path) -> None:
    repo = make_example(tmp_path / "minirt")
    assert repo.commits == PINNED
    assert repo.harness_commit == PINNED["harness"]
    # A clean work tree on main at the harness commit, with no hook of any kind.
    head = isolated_git(["rev-parse", "HEAD"], cwd=repo.path).decode().strip()
    branch = isolated_git(["symbolic-ref", "--short", "HEAD"], cwd=repo.path).decode().strip()
    assert (head, branch) == (PINNED["harness"], "main")
    assert isolated_git(["status", "--porcelain", "--ignored"], cwd=repo.path) == b""
    assert not (repo.path / ".git" / "hooks").exists()


def test_a_folder_with_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SourceError, match="not empty"):
        make_example(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_a_hostile_machine_gets_the_same_commits(tmp_path: Path, locale: str) -> None:
    home = tmp_path / "home"
    marker = _hostile_home(home)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "HOME": str(home),
        "TZ": "Pacific/Kiritimati",
        "LC_ALL": locale,
        "LANG": locale,
        # Environment variables git would otherwise take over any config.
        "GIT_AUTHOR_NAME": "Eve",
        "GIT_AUTHOR_DATE": "2030-01-01T00:00:00+14:00",
        "GIT_COMMITTER_DATE": "2030-01-01T00:00:00+14:00",
        "GIT_DEFAULT_BRANCH": "other",
    }
    done = subprocess.run(
        [sys.executable, "-c", _GENERATE, "repo"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == PINNED
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    repo = elsewhere / "repo"
    assert not (repo / ".git" / "hooks").exists()
    # autocrlf=true in the user's config did not reach the checkout: bytes are the blobs'.
    assert b"\r\n" not in (repo / "minirt" / "_loop.py").read_bytes()
