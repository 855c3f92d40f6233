"""The Node probe in real ``node`` processes (``kind: node``): CommonJS and ES modules of an
honest run, a child process, an edited file and a copy run from elsewhere, and the verdict;
and the Python probe's cover of a single-file script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.revision import Repo
from pairbench.proof import MountedFile, install_probe, probe_env, read_mounted, verdict
from pairbench.source import Production, Worktree, materialize, remove_worktree

NODE_SOURCES = (".js", ".cjs", ".mjs")
FILES = {
    "main.js": "const h = require('./lib/helper.js');\n"
    "const { spawnSync } = require('child_process');\n"
    "spawnSync(process.execPath, [__dirname + '/child.mjs'], { stdio: 'inherit' });\n"
    "console.log(h.x);\n",
    "lib/helper.js": "module.exports = { x: 1 };\n",
    "child.mjs": "import { y } from './lib/esm.mjs';\nconsole.log(y);\n",
    "lib/esm.mjs": "export const y = 2;\n",
}


def _tree(tmp_path: Path, files: dict[str, str]) -> Worktree:
    repo = Repo(tmp_path / "repo")
    for name, text in files.items():
        repo.write(name, text)
    commit = repo.commit("rt")
    production = Production(include=list(files))
    return materialize(repo.path, commit, tmp_path / "arm",
                       tmp_path / "cache.git", production)  # fmt: skip


def _run(
    tree_path: Path, argv: list[str], trial: Path, kind: str = "node"
) -> tuple[subprocess.CompletedProcess[str], list[MountedFile]]:
    probe = install_probe(trial / "probe", tree_path, [] if kind == "node" else ["script"],
                          trial / "mounted.jsonl", kind=kind)  # fmt: skip
    pythonpath = [tree_path] if kind == "python" else []
    env = {"PATH": os.environ["PATH"], **probe_env(probe, trial / "pycache", pythonpath=pythonpath)}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done, read_mounted(trial / "mounted.jsonl")


def test_node_commonjs_es_modules_and_a_child_are_proven(tmp_path: Path) -> None:
    tree = _tree(tmp_path, FILES)
    root = Path(tree.path)
    try:
        done, records = _run(root, ["node", str(root / "main.js")], tmp_path / "t1")
        assert done.stdout.split() == ["2", "1"]
        assert len({r.pid for r in records if r.kind == "start"}) == 2  # the child too
        found = verdict(records, tree.manifest, root, [], sources=NODE_SOURCES)
        assert (found.status, found.coverage) == ("ok", "4/4"), found.summary
        assert found.files == sorted(FILES)
    finally:
        remove_worktree(tree)


def test_an_edited_file_is_a_mismatch_and_a_copy_run_elsewhere_proves_nothing(
    tmp_path: Path,
) -> None:
    tree = _tree(tmp_path, FILES)
    root = Path(tree.path)
    try:
        # The attacker's copy, edited, run from outside the checkout: no production file ran.
        copy = tmp_path / "copy"
        for name, text in FILES.items():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_text(text.replace("x: 1", "x: 9"), encoding="utf-8")
        _, records = _run(root, ["node", str(copy / "main.js")], tmp_path / "t2")
        found = verdict(records, tree.manifest, root, [], sources=NODE_SOURCES)
        assert found.status == "unavailable" and found.coverage == "0/4"
        # An edit inside the checkout itself (write bits put back, as root can).
        helper = root / "lib" / "helper.js"
        os.chmod(helper, 0o644)
        helper.write_text("module.exports = { x: 9 };\n", encoding="utf-8")
        _, records = _run(root, ["node", str(root / "main.js")], tmp_path / "t3")
        found = verdict(records, tree.manifest, root, [], sources=NODE_SOURCES)
        assert found.status == "mismatch" and "lib/helper.js" in found.summary
    finally:
        remove_worktree(tree)


def test_a_single_file_python_script_is_covered(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {"script.py": "import json\nprint(json.dumps(1))\n"})
    root = Path(tree.path)
    try:
        _, records = _run(root, [sys.executable, str(root / "script.py")], tmp_path / "t4",
                          kind="python")  # fmt: skip
        found = verdict(records, tree.manifest, root, ["script"])
        assert (found.status, found.coverage) == ("ok", "1/1"), found.summary
    finally:
        remove_worktree(tree)


def test_node_probe_env_starts_the_preload_and_makes_the_log_folder(tmp_path: Path) -> None:
    probe = install_probe(tmp_path / "p", tmp_path, [], tmp_path / "deep" / "m.jsonl", kind="node")
    env = probe_env(probe, tmp_path / "pycache")
    assert env["NODE_OPTIONS"] == f'--require "{tmp_path / "p" / "_node_probe.cjs"}"'
    assert (tmp_path / "deep").is_dir() and "PYTHONPATH" not in env
