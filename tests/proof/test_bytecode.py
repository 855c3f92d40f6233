"""Stale bytecode: a ``.pyc`` that runs instead of its source is a mismatch, and with the
empty ``PYTHONPYCACHEPREFIX`` a stale ``__pycache__`` beside the source is never read."""

from __future__ import annotations

import py_compile
import shutil
import sys
from pathlib import Path

import pytest

from helpers.proof import PACKAGES, Runtime, make_minirt, probed, run_python, sha256_file
from pairbench.proof import read_mounted, verdict

MAIN = "import minirt; minirt.main()"
STALE = 'def greet():\n    return "stale bytecode"\n'


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    return make_minirt(tmp_path_factory.mktemp("minirt") / "repo")


@pytest.fixture
def copy(runtime: Runtime, tmp_path: Path) -> Path:
    root = tmp_path / "rt"
    shutil.copytree(runtime.repo / "minirt", root / "minirt")
    return root


def _compile_stale(tmp_path: Path, target: Path, mode: py_compile.PycInvalidationMode) -> None:
    """Bytecode of other source than the worktree's, written at ``target``."""
    source = tmp_path / "stale" / "util.py"
    source.parent.mkdir(exist_ok=True)
    source.write_text(STALE)
    target.parent.mkdir(exist_ok=True)
    py_compile.compile(str(source), cfile=str(target), doraise=True, invalidation_mode=mode)


def test_a_sourceless_pyc_beside_a_deleted_source_is_a_bytecode_mismatch(
    runtime: Runtime, copy: Path, tmp_path: Path
) -> None:
    (copy / "minirt/util.py").unlink()
    legacy = copy / "minirt/util.pyc"  # the pre-3.2 place: imported without any source
    _compile_stale(tmp_path, legacy, py_compile.PycInvalidationMode.TIMESTAMP)
    run = probed(tmp_path / "trial", copy)
    done = run_python(MAIN, run.env, tmp_path)
    assert done.stdout == "stale bytecode\n", done.stderr
    records = read_mounted(run.log)
    [loaded] = [r for r in records if r.module == "minirt.util"]
    assert (loaded.kind, loaded.path, loaded.sha256) == (
        "bytecode", str(legacy.resolve()), sha256_file(legacy)
    )  # fmt: skip
    result = verdict(records, runtime.manifest, copy, PACKAGES)
    assert result.status == "mismatch"
    assert [(p.reason, p.path) for p in result.problems] == [("bytecode", "minirt/util.pyc")]


@pytest.mark.parametrize("prefix", [True, False], ids=["empty-prefix", "no-prefix"])
def test_a_stale_pycache_beside_the_source_runs_only_without_the_empty_prefix(
    runtime: Runtime, copy: Path, tmp_path: Path, prefix: bool
) -> None:
    cached = copy / "minirt/__pycache__" / f"util.{sys.implementation.cache_tag}.pyc"
    # Unchecked-hash bytecode is used without looking at the source at all: the worst case.
    _compile_stale(tmp_path, cached, py_compile.PycInvalidationMode.UNCHECKED_HASH)
    run = probed(tmp_path / "trial", copy)
    env = dict(run.env)
    if not prefix:
        del env["PYTHONPYCACHEPREFIX"]  # the control: the interpreter's default lookup
    done = run_python(MAIN, env, tmp_path)
    records = read_mounted(run.log)
    [loaded] = [r for r in records if r.module == "minirt.util"]
    result = verdict(records, runtime.manifest, copy, PACKAGES)
    if prefix:
        assert done.stdout == "hello from minirt\n", done.stderr
        assert (loaded.kind, loaded.sha256) == ("source", sha256_file(copy / "minirt/util.py"))
        assert result.status == "ok", result.summary
    else:
        assert done.stdout == "stale bytecode\n", done.stderr
        assert (loaded.kind, loaded.path) == ("bytecode", str(cached.resolve()))
        assert loaded.source_path == str((copy / "minirt/util.py").resolve())
        assert result.status == "mismatch"
        [problem] = result.problems
        assert (problem.reason, problem.path) == ("bytecode", "minirt/util.py")
        assert "stale bytecode" in problem.describe()
