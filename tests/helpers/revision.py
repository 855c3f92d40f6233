"""Real git repositories for the revision-source tests, with fixed authors, dates and config.

The tests' own git calls never read the machine's config either, so a commit made here has
the same SHA on every machine (the tests do not depend on it, but a stray setting cannot
make a commit fail or sign it).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

FIXED_DATE = "2026-01-02T03:04:05+00:00"


def git_env(home: Path) -> dict[str, str]:
    """A minimal environment for the tests' own git calls."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "Ada Author",
        "GIT_AUTHOR_EMAIL": "ada@example.invalid",
        "GIT_AUTHOR_DATE": FIXED_DATE,
        "GIT_COMMITTER_NAME": "Cy Committer",
        "GIT_COMMITTER_EMAIL": "cy@example.invalid",
        "GIT_COMMITTER_DATE": FIXED_DATE,
        "LC_ALL": "C",
        "TZ": "UTC",
    }


class Repo:
    """A work-tree repository on branch ``main``, built file by file and commit by commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.home = path.parent / f"{path.name}-git-home"
        self.home.mkdir(parents=True, exist_ok=True)
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        """Run git in the repository; its stdout (stripped)."""
        done = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=git_env(self.home),
            input=stdin,
            capture_output=True,
            check=True,
        )
        return done.stdout.decode("utf-8").strip()

    def write(self, rel: str, data: str | bytes, *, executable: bool = False) -> None:
        """Write a file (folders made as needed); ``executable`` sets its exec bits."""
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        mode = 0o755 if executable else 0o644
        target.chmod(mode)

    def commit(self, message: str) -> str:
        """Stage everything and commit; the new commit's 40-hex id."""
        self.git("add", "--all")
        self.git("commit", "--quiet", "--no-verify", "-m", message)
        return self.git("rev-parse", "HEAD")


def minirt(path: Path) -> tuple[Repo, str]:
    """A small runtime repository: production under ``minirt/``, tests, docs and a harness."""
    repo = Repo(path)
    repo.write("pyproject.toml", '[project]\nname = "minirt"\n')
    repo.write("minirt/__init__.py", '"""minirt."""\n')
    repo.write("minirt/loop.py", "def run():\n    return 1\n")
    repo.write("minirt/tool.sh", "#!/bin/sh\necho tool\n", executable=True)
    repo.write("minirt/data/é.txt", "non-ASCII name\n")
    repo.write("minirt/tests/test_loop.py", "def test():\n    return None\n")
    repo.write("docs/index.md", "# docs\n")
    repo.write("harness/build.py", "print('build')\n")
    (path / "minirt" / "link.py").symlink_to("loop.py")
    return repo, repo.commit("baseline")


def tree_snapshot(root: Path) -> dict[str, tuple[int, int, int, str]]:
    """Every entry below ``root`` (``.git`` too): mode, size, mtime and content hash.

    Equal snapshots mean nothing was written, created, removed, chmodded or touched.
    """
    found: dict[str, tuple[int, int, int, str]] = {}
    for folder, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(folder) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                digest = "link:" + os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                digest = "dir"
            found[path.relative_to(root).as_posix()] = (
                info.st_mode,
                info.st_size if digest != "dir" else 0,
                info.st_mtime_ns,
                digest,
            )
    return found
