"""A tiny runtime (``minirt``) in a real git repository, and a way to run it under the probe."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from helpers.revision import Repo
from pairbench.proof import ProbeInstall, install_probe, probe_env
from pairbench.source import Manifest, production_manifest

INCLUDE = ["minirt/**", "pyproject.toml"]
EXCLUDE = ["minirt/tests/**"]
PACKAGES = ["minirt"]

MINIRT = {
    "pyproject.toml": '[project]\nname = "minirt"\n',
    "minirt/__init__.py": '"""minirt."""\nfrom minirt.core import main\n',
    "minirt/core.py": (
        "import subprocess\nimport sys\n\nfrom minirt import util\n\n\n"
        "def main(spawn=False):\n"
        "    print(util.greet(), flush=True)\n"
        "    if spawn:\n"
        '        subprocess.run([sys.executable, "-c", "import minirt.tool"], check=True)\n\n\n'
        "def later():\n"
        "    from minirt import lazy  # imported only when called\n\n"
        "    return lazy.VALUE\n"
    ),
    "minirt/util.py": 'def greet():\n    return "hello from minirt"\n',
    "minirt/tool.py": 'print("tool ran", flush=True)\n',
    "minirt/lazy.py": "VALUE = 7\n",
    "minirt/tests/test_core.py": "def test_main():\n    return None\n",
}
"""Five production ``.py`` files; ``lazy`` loads only if ``later()`` is called."""

PRODUCTION_PY = 5


class Runtime(NamedTuple):
    """The minirt repository at one commit, and its production manifest."""

    repo: Path
    commit: str
    manifest: Manifest


def make_minirt(path: Path) -> Runtime:
    """Commit ``MINIRT`` into a new repository at ``path``."""
    repo = Repo(path)
    for rel, text in MINIRT.items():
        repo.write(rel, text)
    commit = repo.commit("minirt")
    return Runtime(path, commit, production_manifest(path, commit, INCLUDE, EXCLUDE))


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Probed(NamedTuple):
    """Where one probed run keeps its probe, log and bytecode prefix."""

    probe: ProbeInstall
    env: dict[str, str]
    log: Path


def probed(trial: Path, root: Path, *, pythonpath: list[Path] | None = None) -> Probed:
    """A probe installed for ``root`` under ``trial``, and a scrubbed env running it.

    ``pythonpath`` defaults to ``[root]``; list a shadowing folder before it to shadow.
    """
    log = trial / "mounted.jsonl"
    probe = install_probe(trial / "probe", root, PACKAGES, log)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        **probe_env(probe, trial / "pycache", pythonpath=pythonpath or [root]),
    }
    return Probed(probe, env, log)


def run_python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``sys.executable -c code``, its output captured, in its own session."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
        check=False,
    )
