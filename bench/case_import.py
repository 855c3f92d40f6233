"""Case: importing a pair of Inspect AI logs, beside ``inspect_ai.analysis.samples_df``.

Make the logs with Inspect's own CLI (bench/.venv-inspect), 10,000 samples x 2 epochs each::

    for v in a b; do bench/.venv-inspect/bin/inspect eval bench/inspect_bench/bench_tasks.py@noop \\
        -T n=10000 --epochs 2 --model mockllm/model --log-dir /tmp/logs/$v --display none; done

then, with pairbench's venv and the inspect extra (``pip install 'pairbench[inspect]'``)::

    python bench/case_import.py /tmp/logs/a/*.eval /tmp/logs/b/*.eval

Each measurement runs in a fresh child process (so peak RSS is its own): ``pairbench import``
of both logs into a new runs folder, and ``samples_df`` over the same two files. Prints one JSON
object: wall and CPU seconds and peak RSS (MB) of each, and the samples each saw. The suite
runs it at toy size (tests/bench/test_case_import.py).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, out, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
t0, c0 = time.perf_counter(), time.process_time()
if mode == "import":
    from pairbench.importers._api import import_logs
    run = import_logs("inspect", [Path(p) for p in logs], Path(out))
    n = sum(1 for _ in (run / "results").rglob("*.json"))
else:
    from inspect_ai.analysis import samples_df
    n = len(samples_df(logs, quiet=True))
print(json.dumps({
    "wall_s": round(time.perf_counter() - t0, 2),
    "cpu_s": round(time.process_time() - c0, 2),
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    "samples": n,
}))
"""


def _env() -> dict[str, str]:
    """The child's environment: only what finds Python and its packages."""
    import os

    keep = ("PATH", "HOME", "PYTHONPATH", "LANG", "TMPDIR")
    return {k: os.environ[k] for k in keep if k in os.environ}


def measure(mode: str, logs: list[str]) -> dict[str, Any]:
    """One fresh process: ``import`` (pairbench) or ``samples_df`` (Inspect) over ``logs``."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, mode, str(Path(out) / "runs"), *logs],
            capture_output=True,
            text=True,
            check=False,
            env=_env(),
        )
    if done.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs=2, help="two Inspect logs of the same task")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = {
        "logs": [{"path": p, "bytes": Path(p).stat().st_size} for p in args.logs],
        "pairbench_import": measure("import", args.logs),
        "inspect_samples_df": measure("samples_df", args.logs),
        "parent_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "total_s": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
