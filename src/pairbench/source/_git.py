"""Every git command pairbench runs, under a config no user or system setting can reach.

A user's ``~/.gitconfig`` can sign commits, run hooks, rewrite line endings, start an
fsmonitor daemon or swap objects (``replace`` refs); any of those would make the bytes we
check out differ from the bytes we hash, or write where we must not. So each call gets a
fresh, empty ``HOME``, no global or system config, and ``-c`` settings that beat the
repository's own config.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pairbench.source._errors import SourceError

# Command-line -c beats every config file, the repository's own included.
SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.autocrlf=false",
    "core.eol=lf",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.detachedHead=false",
    "protocol.ext.allow=never",
)


class GitFailed(SourceError):
    """A git command exited non-zero; ``stderr`` holds what it said."""

    def __init__(self, message: str, stderr: str) -> None:
        self.stderr = stderr
        super().__init__(message)


def git_executable() -> str:
    """The ``git`` on PATH, or a ``SourceError`` saying to install it.

    **Usage**::

        git = git_executable()   # "/usr/bin/git"
    """
    found = shutil.which("git")
    if found is None:
        raise SourceError(
            "git is not on PATH: revision sources need it. Fix: install git "
            "(apt-get install git) or put it on PATH"
        )
    return found


def git_env(home: str, ceiling: Path | None = None) -> dict[str, str]:
    """The whole environment of an isolated git call: nothing inherited but ``PATH``.

    ``ceiling`` stops repository discovery above it, so a folder that is not a repository
    is not mistaken for the repository that happens to contain it.
    """
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": home,
        "XDG_CONFIG_HOME": home,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_SYSTEM": "/dev/null",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        # Reads must not refresh the user's index (git status would, without this).
        "GIT_OPTIONAL_LOCKS": "0",
        # A replace ref would make `cat-file` answer with other bytes than the tree's.
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_LFS_SKIP_SMUDGE": "1",
        "LC_ALL": "C",
        "LANG": "C",
        "TZ": "UTC",
    }
    if ceiling is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
    return env


def git_dir_of(repo: Path) -> Path:
    """The git directory of a work tree (``repo/.git``: a folder, or a worktree's file), or a
    bare repository itself; for commands that only read objects."""
    dot_git = Path(repo) / ".git"
    return dot_git if dot_git.exists() else Path(repo)


def isolated_git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    git_dir: Path | None = None,
    stdin: bytes | None = None,
    timeout_s: float = 300.0,
    what: str = "",
) -> bytes:
    """Run ``git ARGS`` isolated (see the module docstring); its stdout, or a ``SourceError``
    (``GitFailed`` when git ran and failed).

    ``git_dir`` runs against that repository (``--git-dir``); ``cwd`` runs in a folder,
    discovering its repository in that folder only. ``what`` starts the error message.

    **Usage**::

        head = isolated_git(["rev-parse", "HEAD"], cwd=worktree).decode().strip()
        blobs = isolated_git(["cat-file", "--batch"], git_dir=cache, stdin=b"<sha>\\n")
    """
    argv = [git_executable()]
    for setting in SAFE_CONFIG:
        argv += ["-c", setting]
    if git_dir is not None:
        argv.append(f"--git-dir={git_dir}")
    argv += list(args)
    ceiling = cwd.resolve().parent if cwd is not None else None
    with tempfile.TemporaryDirectory(prefix="pairbench-git-home-") as home:
        try:
            done = subprocess.run(
                argv,
                cwd=cwd if cwd is not None else home,
                env=git_env(home, ceiling),
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise SourceError(
                f"{what or 'git'}: `git {' '.join(args)}` took over {timeout_s:.0f} s"
            ) from None
        except OSError as exc:
            raise SourceError(f"{what or 'git'}: cannot run git: {exc}") from None
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        detail = stderr.splitlines()[-1] if stderr else f"exit code {done.returncode}"
        raise GitFailed(f"{what or 'git ' + ' '.join(args)}: {detail}", stderr)
    return done.stdout
