"""Running a bench script (bench/*.py) at toy size with its results in a tmp folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.common import REPO, checkout_env

BENCH = REPO / "bench"


def bench(
    script: str,
    *args: str,
    root: Path,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run ``bench/<script>`` with its results and scratch under ``root`` (``env``: added to
    the scrubbed environment); the results."""
    env = checkout_env() | {
        "HOME": str(root / "home"),
        "BENCH_RESULTS": str(root / "results"),
        "BENCH_WORK": str(root / "work"),
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        env=env, cwd=root, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{script} {args}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    folder = root / "results" / "toy"
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json")}
