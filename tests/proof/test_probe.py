"""The probe in real interpreters: what an honest run, a child, a shadowing copy and an
edited file leave in ``mounted.jsonl``, and the verdict on it."""

from __future__ import annotations

import array  # a stdlib extension module the probe itself does not import
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.proof import (
    EXCLUDE,
    INCLUDE,
    PACKAGES,
    PRODUCTION_PY,
    Runtime,
    make_minirt,
    probed,
    run_python,
    sha256_file,
)
from pairbench.proof import MountMismatch, read_mounted, require_mounted, verdict
from pairbench.source import Production, Worktree, materialize, remove_worktree

MAIN = "import minirt; minirt.main()"


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    return make_minirt(tmp_path_factory.mktemp("minirt") / "repo")


@pytest.fixture(scope="module")
def tree(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worktree]:
    """The commit materialized as a runner would: a private clone's checked worktree."""
    work = tmp_path_factory.mktemp("work")
    production = Production(include=INCLUDE, exclude=EXCLUDE)
    checkout = materialize(
        runtime.repo, runtime.commit, work / "arm", work / "cache.git", production
    )
    yield checkout
    remove_worktree(checkout)


@pytest.fixture
def copy(runtime: Runtime, tmp_path: Path) -> Path:
    """A throwaway copy of the worktree's files, for tests that change them."""
    root = tmp_path / "rt"
    shutil.copytree(runtime.repo / "minirt", root / "minirt")
    return root


def test_an_honest_run_is_ok_with_coverage_of_what_it_imported(
    tree: Worktree, tmp_path: Path
) -> None:
    root = Path(tree.path)
    hashes = []
    for trial in ("t1", "t2"):
        run = probed(tmp_path / trial, root)
        done = run_python(MAIN, run.env, tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, "hello from minirt\n", "")
        result = verdict(read_mounted(run.log), tree.manifest, root, PACKAGES)
        assert result.status == "ok", result.summary
        # __init__, core and util ran; tool and lazy were never imported.
        assert result.coverage == f"3/{PRODUCTION_PY}"
        assert result.files == ["minirt/__init__.py", "minirt/core.py", "minirt/util.py"]
        assert result.processes == 1
        assert not list((tmp_path / trial / "pycache").iterdir())  # nothing written there
        hashes.append(result.mounted_hash)
    assert hashes[0] is not None and hashes[0] == hashes[1]
    require_mounted(result)  # does not raise


def test_a_child_process_is_probed_and_recorded_under_its_own_pid(
    tree: Worktree, tmp_path: Path
) -> None:
    root = Path(tree.path)
    run = probed(tmp_path, root)
    done = run_python("import minirt; minirt.main(spawn=True)", run.env, tmp_path)
    assert done.stdout == "hello from minirt\ntool ran\n", done.stderr
    records = read_mounted(run.log)
    starts = [r for r in records if r.kind == "start"]
    assert len(starts) == 2
    parent, child = starts
    assert child.ppid == parent.pid != child.pid
    tool = [r for r in records if r.module == "minirt.tool"]
    assert [(r.pid, r.kind, r.path) for r in tool] == [
        (child.pid, "source", str(Path(root, "minirt/tool.py").resolve()))
    ]
    assert tool[0].sha256 == sha256_file(root / "minirt/tool.py")
    result = verdict(records, tree.manifest, root, PACKAGES)
    assert (result.status, result.coverage, result.processes) == ("ok", "4/5", 2)


def test_a_shadowing_copy_earlier_on_the_path_is_named(
    runtime: Runtime, copy: Path, tmp_path: Path
) -> None:
    shadow = tmp_path / "shadow"
    shutil.copytree(copy / "minirt", shadow / "minirt")  # identical bytes, wrong place
    run = probed(tmp_path / "trial", copy, pythonpath=[shadow, copy])
    done = run_python(MAIN, run.env, tmp_path)
    assert done.returncode == 0, done.stderr
    result = verdict(read_mounted(run.log), runtime.manifest, copy, PACKAGES)
    assert result.status == "shadowed"
    origins = {p.origin for p in result.problems if p.reason == "shadowed"}
    assert str((shadow / "minirt/__init__.py").resolve()) in origins
    assert str(shadow.resolve()) in result.summary
    with pytest.raises(MountMismatch, match=r"minirt shadowed: loaded from .*shadow/minirt"):
        require_mounted(result)


def test_an_edited_worktree_file_is_a_mismatch_naming_it_and_both_hashes(
    runtime: Runtime, copy: Path, tmp_path: Path
) -> None:
    util = copy / "minirt/util.py"
    util.write_text(util.read_text().replace("hello", "HELLO"))
    run = probed(tmp_path / "trial", copy)
    done = run_python(MAIN, run.env, tmp_path)
    assert done.stdout == "HELLO from minirt\n"
    result = verdict(read_mounted(run.log), runtime.manifest, copy, PACKAGES)
    assert result.status == "mismatch"
    expected = next(e.sha256 for e in runtime.manifest.entries if e.path == "minirt/util.py")
    [problem] = result.problems
    assert (problem.reason, problem.path) == ("content", "minirt/util.py")
    assert (problem.expected_sha256, problem.actual_sha256) == (expected, sha256_file(util))
    with pytest.raises(MountMismatch, match=rf"minirt/util.py: sha256 \w+, manifest {expected}"):
        require_mounted(result)


def test_a_module_the_manifest_does_not_list_is_a_mismatch(
    runtime: Runtime, copy: Path, tmp_path: Path
) -> None:
    (copy / "minirt/extra.py").write_text("X = 1\n")
    run = probed(tmp_path / "trial", copy)
    assert run_python("import minirt.extra", run.env, tmp_path).returncode == 0
    result = verdict(read_mounted(run.log), runtime.manifest, copy, PACKAGES)
    assert result.status == "mismatch"
    assert [(p.reason, p.path) for p in result.problems] == [("unlisted", "minirt/extra.py")]


def test_a_file_opened_under_the_root_is_recorded_and_checked(
    runtime: Runtime, copy: Path, tmp_path: Path
) -> None:
    (copy / "notes.txt").write_text("not production\n")
    code = "open('rt/minirt/lazy.py').read(); open('rt/notes.txt', 'rb').read()"
    run = probed(tmp_path / "trial", copy)
    assert run_python(code, run.env, tmp_path).returncode == 0
    records = read_mounted(run.log)
    opened = {Path(r.path or "").name for r in records if r.kind == "opened"}
    assert opened == {"lazy.py", "notes.txt"}
    result = verdict(records, runtime.manifest, copy, PACKAGES)
    # Opened, not run: checked against the manifest, but neither hashed nor covered.
    assert (result.status, result.unlisted_opened, result.coverage) == (
        "unavailable", ["notes.txt"], "0/5"
    )  # fmt: skip


def test_an_extension_module_is_hashed_and_one_under_the_root_must_be_production(
    runtime: Runtime, copy: Path, tmp_path: Path
) -> None:
    stdlib = Path(array.__file__)
    run = probed(tmp_path / "t1", copy)
    assert run_python("import array", run.env, tmp_path).returncode == 0
    [record] = [r for r in read_mounted(run.log) if r.module == "array"]
    assert (record.kind, record.path) == ("extension", str(stdlib.resolve()))
    assert record.sha256 == sha256_file(stdlib)
    # The same binary dropped into the worktree runs from there: code the manifest lacks.
    shutil.copy(stdlib, copy / stdlib.name)
    run = probed(tmp_path / "t2", copy)
    assert run_python("import array, minirt", run.env, tmp_path).returncode == 0
    result = verdict(read_mounted(run.log), runtime.manifest, copy, PACKAGES)
    assert result.status == "mismatch"
    assert [(p.reason, p.path) for p in result.problems] == [("unlisted", stdlib.name)]
