"""Helpers shared by the bench scripts: child processes with rusage, machine info, results."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
# BENCH_RESULTS and BENCH_WORK move both elsewhere (the toy-size tests use a tmp folder).
RESULTS = Path(os.environ.get("BENCH_RESULTS") or BENCH / "results")
WORK = Path(
    os.environ.get("BENCH_WORK") or BENCH / ".work"
)  # git-ignored scratch on the repo's disk (fsync is real there, not tmpfs)
PLUGIN = BENCH / "plugin"
PB_PY = REPO / ".venv" / "bin" / "python"
INSPECT_VENV = Path(os.environ.get("BENCH_INSPECT_VENV") or BENCH / ".venv-inspect")
"""Inspect's own venv (``make bench`` makes it); ``BENCH_INSPECT_VENV`` names another that
holds the pinned inspect-ai (the suite's toy run uses pairbench's dev venv, which does)."""
INSPECT_VERSION = os.environ.get("BENCH_INSPECT_VERSION", "0.3.285")
BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def installed_inspect() -> str | None:
    """The inspect-ai version installed in ``INSPECT_VENV`` (None: none is)."""
    meta = list((INSPECT_VENV / "lib").glob("python*/site-packages/inspect_ai-*.dist-info"))
    return meta[0].name.removesuffix(".dist-info").split("-")[1] if meta else None


def median(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def run_child(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    stamps: Path | None = None,
    log: Path | None = None,
    timeout_s: float = 900,
) -> dict[str, Any]:
    """Run ``argv`` to completion; wall time, CPU (user+sys) and peak RSS from ``wait4``.

    ``wait4`` reports the child's own rusage plus that of its waited-for descendants, so
    CPU includes any helper processes the child started and reaped; peak RSS is the
    largest single process. With ``stamps`` the child writes ``{"first_start",
    "last_end", "n"}`` (wall clock) there: ``first_trial_s`` is process start to the
    first agent/solver start.
    """
    full_env = dict(os.environ if env is None else env)
    # Both tools as users run them, with bytecode caches: a sandbox's PYTHONDONTWRITEBYTECODE
    # would make pairbench's editable src/ compile on every start (~0.15 s) while Inspect's
    # site-packages keep the .pyc files pip wrote.
    full_env.pop("PYTHONDONTWRITEBYTECODE", None)
    if stamps is not None:
        stamps.unlink(missing_ok=True)
        full_env["PAIRBENCH_BENCH_STAMPS"] = str(stamps)
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115
    try:
        t_wall0 = time.time()
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=full_env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if log:
            out.close()  # type: ignore[union-attr]
    res: dict[str, Any] = {
        "returncode": proc.returncode,
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "peak_rss_mb": ru.ru_maxrss / 1024,  # Linux: kilobytes
    }
    if stamps is not None and stamps.exists():
        s = json.loads(stamps.read_text())
        if s.get("first_start"):
            res["first_trial_s"] = s["first_start"] - t_wall0
        if s.get("first_start_peak_rss_mb") is not None:
            res["first_trial_peak_rss_mb"] = s["first_start_peak_rss_mb"]
        if s.get("first_start") and s.get("last_end"):
            res["span_s"] = s["last_end"] - s["first_start"]
        res["trials_seen"] = s.get("n")
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
        raise RuntimeError(f"{argv[:4]}... exited {proc.returncode}: {tail}")
    return res


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine_info() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    inspect_version = installed_inspect()
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
        "load_avg_at_start": os.getloadavg(),
        "python": platform.python_version(),
        "pairbench_commit": _git("rev-parse", "--short", "HEAD"),
        "pairbench_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "inspect_ai": inspect_version,
        "blas_env": {v: os.environ.get(v) for v in BLAS_VARS},
        "note": "shared 2-core machine: figures are medians of interleaved runs",
    }


def results_dir(quick: bool | str = False) -> Path:
    """bench/results (full runs), bench/results/quick or bench/results/toy (``quick`` names
    the mode: True is "quick"): quick and toy runs never overwrite the full figures."""
    mode = "quick" if quick is True else quick or ""
    return RESULTS / mode if mode else RESULTS


def write_result(case: str, data: dict[str, Any], quick: bool | str = False) -> Path:
    folder = results_dir(quick)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{case}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def pb_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """pairbench's child environment: the bench plugin on PYTHONPATH, no tty progress."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(PLUGIN), env.get("PYTHONPATH", "")] if p)
    env.update(extra or {})
    return env


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
