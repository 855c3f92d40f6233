"""What the bench's cases share: experiments, one pairbench or Inspect run, interleaving."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from _common import (
    BENCH,
    INSPECT_VENV,
    INSPECT_VERSION,
    PB_PY,
    WORK,
    installed_inspect,
    log,
    median,
    pb_env,
    run_child,
)

INSPECT = INSPECT_VENV / "bin" / "inspect"
TASK_FILE = BENCH / "inspect_bench" / "bench_tasks.py"


def inspect_ready() -> bool:
    """Whether ``INSPECT_VENV`` holds the pinned Inspect: installed by ``ensure_inspect``, or
    a venv made elsewhere with that version (toy runs never install it)."""
    made = (INSPECT_VENV / f".installed-{INSPECT_VERSION}").exists()
    return INSPECT.exists() and (made or installed_inspect() == INSPECT_VERSION)


def ensure_inspect() -> None:
    """Create bench/.venv-inspect and pip install inspect-ai (from PyPI) when missing."""
    marker = INSPECT_VENV / f".installed-{INSPECT_VERSION}"
    if inspect_ready():
        return
    log(f"installing inspect-ai=={INSPECT_VERSION} into {INSPECT_VENV} (once; ~1-2 minutes)")
    logfile = WORK / "inspect-install.log"
    logfile.parent.mkdir(parents=True, exist_ok=True)
    with open(logfile, "w") as fh:
        if not (INSPECT_VENV / "bin" / "python").exists():
            subprocess.run(["python3", "-m", "venv", str(INSPECT_VENV)], check=True)
        pip = [str(INSPECT_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True, stdout=fh, stderr=fh)
        subprocess.run([*pip, f"inspect-ai=={INSPECT_VERSION}"], check=True, stdout=fh, stderr=fh)
    marker.touch()


def write_experiment(
    folder: Path,
    exp_id: str,
    adapter: str,
    tasks: int,
    trials: int,
    concurrency: int,
    settings: dict[str, Any] | None = None,
) -> Path:
    """A 2-arm experiment: ``tasks`` tasks x ``trials`` trials (= 2*tasks*trials attempts)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "p.md").write_text("Say PASS.\n", encoding="utf-8")
    task_lines = "\n".join(
        f"  - {{id: t{i}, prompt: p.md, grader: {{name: exact-answer, args: {{expect: PASS}}}}}}"
        for i in range(tasks)
    )
    agent = {"adapter": adapter, "settings": settings or {}}
    (folder / "experiment.yaml").write_text(
        f'id: {exp_id}\nversion: "1"\ntrials: {trials}\n'
        f"budget: {{trial_timeout_s: 120, concurrency: {concurrency}}}\n"
        f"comparisons: [[a, b]]\nagent: {json.dumps(agent)}\n"
        f"arms: {{a: {{}}, b: {{}}}}\ntasks:\n{task_lines}\n",
        encoding="utf-8",
    )
    return folder / "experiment.yaml"


def pb_run(folder: Path, stamps: bool, tag: str) -> dict[str, Any]:
    runs = folder / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    argv = [
        str(PB_PY),
        "-m",
        "pairbench",
        "run",
        "experiment.yaml",
        "--runs-dir",
        "runs",
        "--run-seed",
        "1",
    ]
    res = run_child(
        argv,
        cwd=folder,
        env=pb_env(),
        stamps=folder / "stamps.json" if stamps else None,
        log=folder / f"{tag}.log",
    )
    shutil.rmtree(runs, ignore_errors=True)
    return res


def inspect_run(
    folder: Path, task: str, params: dict[str, Any], concurrency: int, stamps: bool, tag: str
) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    logs = folder / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    argv = [
        str(INSPECT),
        "eval",
        f"{TASK_FILE}@{task}",
        "--model",
        "mockllm/model",
        "--log-dir",
        str(logs),
        "--display",
        "none",
        "--max-samples",
        str(concurrency),
        "--max-connections",
        str(concurrency),
    ]
    for k, v in params.items():
        argv += ["-T", f"{k}={v}"]
    res = run_child(
        argv,
        cwd=folder,
        stamps=folder / "stamps.json" if stamps else None,
        log=folder / f"{tag}.log",
    )
    shutil.rmtree(logs, ignore_errors=True)
    return res


def interleave(reps: int, fns: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Run each tool once per rep, alternating which goes first."""
    names = list(fns)
    out: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for r in range(reps):
        for n in names if r % 2 == 0 else names[::-1]:
            log(f"  rep {r + 1}/{reps}: {n}")
            out[n].append(fns[n]())
    return out


def medians(samples: list[dict[str, Any]], keys: list[str]) -> dict[str, float | None]:
    return {k: median([s.get(k) for s in samples]) for k in keys}
