"""Case 11: hostile subjects at concurrency 4: an agent printing 1 GiB, one writing a 1 GiB file.

Runs ``pairbench run`` in a child process on a scratch experiment (two arms, two trials
each, so four attempts in flight) at the default limits, and records the runner's peak RSS
(``wait4``), each attempt's outcome and reason, and the run folder's size. Prints one JSON
object; ``--write`` also stores it as ``bench/results/limits.json``. Acceptance (issue 38):
peak RSS under 300 MB, outcomes ``output_limit`` and ``disk_limit``, the run complete, and
the viewer's trial page (``pairbench view``, started cold) answering in under 2 s.

    .venv/bin/python bench/case_limits.py --write              # full: 1 GiB each
    .venv/bin/python bench/case_limits.py --mib 8 \
        --limits "{output_per_stream: 1 MiB, file_size: 1 MiB}"     # toy (the suite's)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine_info, run_child, write_result

PB = Path(sys.executable).with_name("pairbench")


def _experiment(root: Path, mib: int, limits: str) -> Path:
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    spew = f"import sys\nb = b'x' * (1 << 20)\nfor _ in range({mib}): sys.stdout.buffer.write(b)"
    agents = {
        "prints": {"command": [sys.executable, "-c", spew], "stdin": "none"},
        "writes": {"command": ["sh", "-c", f"head -c {mib * 1048576} /dev/zero > big"]},
    }
    arms = "\n".join(
        f"  {name}: {{agent: {json.dumps({'adapter': 'command', 'settings': s})}}}"
        for name, s in agents.items()
    )
    budget = f"{{trial_timeout_s: 600, concurrency: 4{', limits: ' + limits if limits else ''}}}"
    path = root / "experiment.yaml"
    path.write_text(
        f"id: limits-bench\nversion: '1'\ntrials: 2\nbudget: {budget}\n"
        "agent: {adapter: command, settings: {command: [sh, -c, 'echo ok']}}\n"
        f"arms:\n{arms}\n"
        "tasks:\n  - {id: t, prompt: p.md, grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    return path


def _size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            total += os.lstat(os.path.join(root, name)).st_size
    return total


def measure(mib: int, limits: str, work: Path) -> dict[str, Any]:
    """One run of the case in ``work``; what it measured."""
    exp = _experiment(work, mib, limits)
    runs = work / "runs"
    # The children run in ``work``: a relative PYTHONPATH (a worktree's ``src``) must not move.
    env = dict(os.environ)
    paths = env.get("PYTHONPATH", "").split(os.pathsep)
    env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in paths if p)
    child = run_child(
        [str(PB), "run", str(exp), "--run-seed", "1", "--runs-dir", str(runs)],
        cwd=work,
        env=env,
        log=work / "run.log",
        timeout_s=1800,
    )
    run_dir = next(runs.iterdir())
    report = run_child(
        [str(PB), "report", str(run_dir)], cwd=work, env=env, log=work / "report.log"
    )
    outcomes = []
    for path in sorted((run_dir / "results").rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        outcomes.append(
            {"arm": data["arm"], "trial": data["trial"], "attempt": data["attempt"],
             "outcome": data["outcome"], "reason": data["reason"],
             "result_bytes": path.stat().st_size}
        )  # fmt: skip
    firsts = {o["arm"]: o["attempt"] for o in outcomes if o["trial"] == 0}
    viewer = _viewer_pages(runs, run_dir.name, firsts)
    return {
        "size_mib": mib,
        "limits": limits or "defaults",
        "runner_peak_rss_mb": round(child["peak_rss_mb"], 1),
        "runner_wall_s": round(child["wall_s"], 2),
        "runner_cpu_s": round(child["cpu_s"], 2),
        "report_peak_rss_mb": round(report["peak_rss_mb"], 1),
        "outcomes": outcomes,
        "run_completed": child["returncode"] == 0,  # run_child raises on any other
        "report_written": (run_dir / "report.md").exists(),
        "run_folder_bytes": _size(run_dir),
        "viewer_trial_page_s": viewer,
    }


def _viewer_pages(runs: Path, run: str, arms: dict[str, int]) -> dict[str, float]:
    """Seconds for the real ``pairbench view`` to answer each arm's first trial page and its
    transcript (the server started cold, as a user opens it after the run)."""
    import httpx
    from case_viewer import start_view

    proc, url = start_view(runs)
    try:
        timings: dict[str, float] = {}
        with httpx.Client(base_url=url, timeout=60) as client:
            for arm, attempt in arms.items():
                trial = f"/runs/{run}/trials/{arm}/t/0"
                more = f"{trial}/transcript?kind=final&attempt={attempt}&offset=0"
                for name, path in ((arm, trial), (f"{arm} transcript", more)):
                    started = time.perf_counter()
                    answer = client.get(path)
                    answer.raise_for_status()
                    timings[name] = round(time.perf_counter() - started, 3)
        return timings
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mib", type=int, default=1024, help="MiB each agent prints or writes")
    ap.add_argument("--limits", default="", help="budget.limits, YAML (default: the defaults)")
    ap.add_argument("--write", action="store_true", help="store bench/results/limits.json")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pb-limits-", dir=Path(__file__).parent / ".work"))
    try:
        result = measure(a.mib, a.limits, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.write:
        write_result("limits", result | {"machine": machine_info()})
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
