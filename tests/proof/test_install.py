"""Installing the probe: its identity is the bytes that run, it never overwrites a runtime's
files, it starts from PYTHONPATH (chaining a runtime's sitecustomize) and from a venv's
site-packages, whose installed copy of the runtime maps back to the worktree."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pairbench.proof as proof
from helpers.proof import PACKAGES, Runtime, make_minirt, probed, run_python, sha256_file
from pairbench.proof import (
    PROBE_FILES,
    PROBE_SHA256,
    ProofError,
    install_probe,
    probe_env,
    read_mounted,
    verdict,
)

PUBLIC = [
    "PROBE_FILES", "PROBE_SHA256", "MountMismatch", "MountProblem", "MountVerdict",
    "MountedFile", "ProbeInstall", "ProofError", "install_probe", "probe_env", "probe_sha256",
    "read_mounted", "require_mounted", "verdict",
]  # fmt: skip


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    return make_minirt(tmp_path_factory.mktemp("minirt") / "repo")


def test_the_public_names_are_exactly_these() -> None:
    assert proof.__all__ == sorted(PUBLIC, key=lambda n: (not n.isupper(), n))
    assert sorted(proof.__all__) == sorted(PUBLIC)


def test_probe_sha256_is_the_hash_of_the_installed_files_and_of_the_bytes_that_ran(
    runtime: Runtime, tmp_path: Path
) -> None:
    run = probed(tmp_path, runtime.repo)
    target = Path(run.probe.target_dir)
    # Recomputed here from the files on disk, by the definition in _install's docstring.
    lines = sorted(f"{p.name}\0{sha256_file(p)}\n" for p in target.iterdir())
    assert len(lines) == 3
    assert hashlib.sha256("".join(lines).encode()).hexdigest() == PROBE_SHA256
    assert run.probe.probe_sha256 == PROBE_SHA256
    source = Path(proof.__file__).parent / "_mounted_probe.py"
    assert PROBE_FILES["_pairbench_mounted.py"] == source.read_bytes()
    # The process records the probe module it ran (imported before its hooks): same bytes.
    assert run_python("pass", run.env, tmp_path).returncode == 0
    early = {r.module: r.sha256 for r in read_mounted(run.log) if r.early}
    assert early["_pairbench_mounted"] == sha256_file(target / "_pairbench_mounted.py")
    assert early["sitecustomize"] == sha256_file(target / "sitecustomize.py")


def test_a_foreign_file_in_the_target_and_a_used_bytecode_prefix_are_refused(
    runtime: Runtime, tmp_path: Path
) -> None:
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "sitecustomize.py").write_text("print('mine')\n")
    with pytest.raises(ProofError, match=r"sitecustomize.py: exists and is not pairbench's"):
        install_probe(tmp_path / "probe", runtime.repo, PACKAGES, tmp_path / "log")
    assert (tmp_path / "probe" / "sitecustomize.py").read_text() == "print('mine')\n"
    probe = install_probe(tmp_path / "ok", runtime.repo, PACKAGES, tmp_path / "log")
    (tmp_path / "pycache" / "x").mkdir(parents=True)
    with pytest.raises(ProofError, match=r"pycache: the bytecode cache prefix is not empty"):
        probe_env(probe, tmp_path / "pycache")


def test_a_runtime_sitecustomize_hidden_by_the_shim_still_runs(
    runtime: Runtime, tmp_path: Path
) -> None:
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "sitecustomize.py").write_text("import builtins\nbuiltins.CUSTOM = 'ran'\n")
    run = probed(tmp_path / "trial", runtime.repo, pythonpath=[runtime.repo, custom])
    code = "import sitecustomize, minirt; print(CUSTOM, sitecustomize.__file__)"
    done = run_python(code, run.env, tmp_path)
    assert done.stdout == f"ran {custom / 'sitecustomize.py'}\n", done.stderr
    result = verdict(read_mounted(run.log), runtime.manifest, runtime.repo, PACKAGES)
    assert result.status == "ok", result.summary


def _venv_with_installed_minirt(runtime: Runtime, where: Path) -> tuple[Path, Path]:
    """A venv whose site-packages holds a copy of minirt (as a build would install it)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    [site] = list(where.glob("lib/python*/site-packages"))
    shutil.copytree(runtime.repo / "minirt", site / "minirt")
    return where / "bin" / "python", site


def test_a_probe_in_venv_site_packages_starts_from_its_pth_and_maps_the_installed_copy(
    runtime: Runtime, tmp_path: Path
) -> None:
    python, site = _venv_with_installed_minirt(runtime, tmp_path / "venv")
    probe = install_probe(site, runtime.repo, PACKAGES, tmp_path / "mounted.jsonl")
    env = probe_env(probe, tmp_path / "pycache", in_site_packages=True)
    assert "PYTHONPATH" not in env
    done = subprocess.run(
        [str(python), "-c", "import minirt; minirt.main(spawn=True)"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.stdout == "hello from minirt\ntool ran\n", done.stderr
    records = read_mounted(Path(probe.log_path))
    installed = str((site / "minirt").resolve())
    mapped = verdict(records, runtime.manifest, runtime.repo, PACKAGES, map={installed: "minirt"})
    assert (mapped.status, mapped.coverage, mapped.processes) == ("ok", "4/5", 2)
    # Without the map the installed copy is a declared package from outside the worktree.
    unmapped = verdict(records, runtime.manifest, runtime.repo, PACKAGES)
    assert unmapped.status == "shadowed"
    assert {p.origin for p in unmapped.problems} >= {f"{installed}/__init__.py"}
    # An installed copy that differs from the worktree's bytes is named by its worktree path.
    (site / "minirt" / "tool.py").write_text('print("patched", flush=True)\n')
    (tmp_path / "mounted.jsonl").unlink()
    shutil.rmtree(tmp_path / "pycache")
    env = probe_env(probe, tmp_path / "pycache", in_site_packages=True)
    subprocess.run([str(python), "-c", "import minirt.tool"], env=env, check=True, timeout=60)
    edited = verdict(
        read_mounted(Path(probe.log_path)), runtime.manifest, runtime.repo, PACKAGES,
        map={installed: "minirt"},
    )  # fmt: skip
    assert edited.status == "mismatch"
    assert [(p.reason, p.path) for p in edited.problems] == [("content", "minirt/tool.py")]
