"""``build``: an arm's declared build command, run in its worktree under a scrubbed environment."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pairbench._model import Frozen
from pairbench._process import popen, resolve_argv, terminate_group
from pairbench.source._drift import disk_entry
from pairbench.source._errors import BuildFailed
from pairbench.spec._glob import PathFilter
from pairbench.spec._revision import BuildSpec

LOG_TAIL_LINES = 20


class BuildRecord(Frozen):
    """What one build ran and produced (one per arm in run.json)."""

    argv: list[str]
    """The argv as run: placeholders filled, ``python3`` replaced by pairbench's interpreter."""
    exit_code: int
    """The command's exit code (0: a failed build raises ``BuildFailed`` instead)."""
    seconds: float
    """Wall time of the build."""
    log: str
    """The file holding the build's stdout and stderr."""
    outputs: list[str]
    """The declared output globs, as written in the spec."""
    output_files: int
    """How many files the globs matched."""
    outputs_sha256: str
    """SHA-256 over the sorted ``{root}/path``, mode and SHA-256 of every matched file."""


def scrubbed_env(home: str, env_allow: Sequence[str] = ()) -> dict[str, str]:
    """The build's whole environment: ``PATH``, the allowed names, then fixed settings.

    The fixed settings win over allowed names: the build stays offline (``PIP_NO_INDEX``)
    and writes no bytecode into the worktree, where a new ``.pyc`` under a production path
    would be drift.
    """
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    env |= {name: os.environ[name] for name in env_allow if name in os.environ}
    env |= {
        "LANG": "C.UTF-8",
        "HOME": home,
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TZ": "UTC",
    }
    return env


def build(
    worktree: Path,
    spec: BuildSpec,
    venv_dir: Path,
    env_allow: Sequence[str] = (),
    *,
    log: Path | None = None,
) -> BuildRecord:
    """Run ``spec.command`` in ``worktree``, its own process group killed at ``spec.timeout_s``.

    ``log`` (default: ``<venv_dir>.build.log`` beside it) gets stdout and stderr. A non-zero
    exit, a timeout or a declared output that matched nothing raises ``BuildFailed`` with
    the log's last lines.

    **Usage**::

        record = build(Path(tree.path), source.build, work / "baseline.venv", ["UV_CACHE_DIR"])
        record.outputs_sha256
    """
    worktree, venv_dir = Path(worktree).absolute(), Path(venv_dir).absolute()
    log = Path(log) if log is not None else venv_dir.with_name(venv_dir.name + ".build.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = resolve_argv(_fill(spec.command, venv_dir, worktree))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pairbench-build-home-") as home, log.open("wb") as out:
        try:
            proc = popen(
                argv, env=scrubbed_env(home, env_allow), stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, cwd=worktree,
            )  # fmt: skip
        except OSError as exc:
            raise BuildFailed(f"build {argv[0]!r} cannot start: {exc}") from None
        try:
            code = proc.wait(timeout=spec.timeout_s)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            # Also on success: a daemon the build left running would outlive the arm.
            terminate_group(proc)
    seconds = round(time.monotonic() - started, 3)
    if code is None:
        raise BuildFailed(f"build timed out after {spec.timeout_s:g} s{_tail(log)}")
    if code != 0:
        raise BuildFailed(f"build exited with code {code} after {seconds:g} s{_tail(log)}")
    files, digest = outputs_sha256(spec.outputs, venv_dir, worktree, log)
    return BuildRecord(
        argv=argv, exit_code=code, seconds=seconds, log=str(log), outputs=list(spec.outputs),
        output_files=files, outputs_sha256=digest,
    )  # fmt: skip


def _fill(argv: Sequence[str], venv: Path, worktree: Path) -> list[str]:
    # str.replace, not str.format: an argv may hold other braces (a JSON argument).
    return [a.replace("{venv}", str(venv)).replace("{worktree}", str(worktree)) for a in argv]


def outputs_sha256(
    patterns: Sequence[str], venv: Path, worktree: Path, log: Path
) -> tuple[int, str]:
    """How many files the output globs match, and the hash over them (see ``BuildRecord``)."""
    digest = hashlib.sha256()
    count = 0
    for pattern in patterns:
        label, root, rel = "{worktree}", worktree, pattern.removeprefix("{worktree}/")
        if pattern.startswith("{venv}/"):
            label, root, rel = "{venv}", venv, pattern.removeprefix("{venv}/")
        selected = PathFilter([rel])
        matched = sorted(p for p in _walk(root) if selected(p))
        if not matched:
            raise BuildFailed(f"build output {pattern!r} matched no file{_tail(log)}")
        for path in matched:
            entry = disk_entry(root, path)
            assert entry is not None  # listed by _walk a moment ago
            digest.update(f"{label}/{path}\0{entry.mode}\0{entry.sha256}\n".encode())
        count += len(matched)
    return count, digest.hexdigest()


def _walk(root: Path) -> list[str]:
    """Files and symlinks below ``root``, ``/``-separated; symlinked folders not entered."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        rel = Path(folder).relative_to(root)
        found += [(rel / n).as_posix() for n in names]
        found += [(rel / d).as_posix() for d in dirs if (Path(folder) / d).is_symlink()]
    return found


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:]
    except OSError:
        return ""
    shown = "\n".join(f"  | {line}" for line in lines) if lines else "  | (empty)"
    return f"; the end of its log {log}:\n{shown}"
