"""Case 6: what report.html's plots cost: drawing each plot, rendering both reports, SVG bytes.

    .venv/bin/python bench/plots.py            # small and large run, 5 repetitions each
    .venv/bin/python bench/plots.py --quick    # small run only, 2 repetitions

Runs a simulated 3-arm experiment (tokens, latency and a timeout or two, so every plot
has something to draw) at two sizes, then times, in this process and with the plot cache
cleared before each repetition: every plot drawn on its own, ``build_figures`` (all of
them), ``render_markdown`` and ``render_html`` (which draw once, then share the cache),
and the first matplotlib import. Writes ``bench/results/plots.json`` (``quick/`` with
``--quick``); the figures are medians.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import WORK, log, machine_info, write_result

GRADE = {"expect": "PASS"}
SIZES = {"small": (9, 3), "large": (200, 10)}  # tasks, trials per arm
"""The small run is a built-in demo's size; the large one draws the heatmap's 80-task cap."""


def _experiment(folder: Path, tasks: int, trials: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "p.md").write_text("Simulated task ${seed}.\n", encoding="utf-8")
    tokens = {
        "input": 2000,
        "output": 300,
        "sigma": 0.3,
        "cost_per_1k": {"input": 0.003, "output": 0.015},
    }
    exp = {
        "id": "bench-plots",
        "version": "1",
        "trials": trials,
        "budget": {"trial_timeout_s": 5, "concurrency": 8},
        "comparisons": [["a", "b"]],
        "agent": {
            "adapter": "simulated",
            "settings": {
                "success": {"a": 0.4, "b": 0.8, "c": 0.6},
                "correlation": 0.6,
                "latency_ms": {arm: {"median": 50, "sigma": 0.4} for arm in "abc"},
                "tokens": {arm: tokens for arm in "abc"},
                "realtime": False,
            },
        },
        "arms": {"a": {}, "b": {}, "c": {}},
        "tasks": [
            {
                "id": f"t{i}",
                "prompt": "p.md",
                "grader": {"name": "exact-answer", "args": {"expect": "PASS"}},
            }
            for i in range(tasks)
        ],
    }
    path = folder / "experiment.yaml"
    path.write_text(json.dumps(exp, indent=1), encoding="utf-8")  # JSON is YAML
    return path


def _timed(fn: Any, reps: int, before: Any = None) -> tuple[float, Any]:
    samples, out = [], None
    for _ in range(reps):
        if before is not None:
            before()
        t0 = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000, out


def case(name: str, tasks: int, trials: int, reps: int) -> dict[str, Any]:
    import pairbench
    from pairbench.report.render import _plots
    from pairbench.report.render._html import render_html
    from pairbench.report.render._markdown import render_markdown

    folder = WORK / f"plots-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    outcome = pairbench.start_run(_experiment(folder, tasks, trials), folder / "runs", run_seed=1)
    paths = pairbench.write_report(Path(outcome.run_dir))
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    clear = _plots._cached.cache_clear
    per_plot = {}
    for plot, build in _plots._BUILDERS.items():
        ms, made = _timed(lambda build=build: build(summary), reps)
        svg = getattr(made, "svg", "")
        per_plot[plot] = {"draw_ms": round(ms, 1), "svg_bytes": len(svg.encode("utf-8"))}
    all_ms, _ = _timed(lambda: _plots.build_figures(summary), reps, clear)
    md_ms, _ = _timed(lambda: render_markdown(summary), reps, clear)
    html_ms, page = _timed(lambda: render_html(summary), reps, clear)
    cached_ms, _ = _timed(lambda: render_html(summary), reps)
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "tasks": tasks,
        "trials_per_arm": tasks * trials,
        "plots": per_plot,
        "build_figures_ms": round(all_ms, 1),
        "render_markdown_ms_cold": round(md_ms, 1),
        "render_html_ms_cold": round(html_ms, 1),
        "render_html_ms_plots_cached": round(cached_ms, 1),
        "report_html_bytes": len(page.encode("utf-8")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--toy", action="store_true", help="a 2-task run, once (tests/bench/)")
    args = parser.parse_args()
    mode: bool | str = "toy" if args.toy else args.quick
    reps = 1 if args.toy else 2 if args.quick else 5
    t0 = time.perf_counter()
    import matplotlib.figure  # noqa: F401  (the first import, timed: the report pays it once)

    import_ms = (time.perf_counter() - t0) * 1000
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sizes = {"toy": (2, 1)} if args.toy else {"small": SIZES["small"]} if args.quick else SIZES
    cases = {}
    for name, (tasks, trials) in sizes.items():
        log(f"plots: {name} run ({tasks} tasks x {trials} trials x 3 arms), {reps} reps")
        cases[name] = case(name, tasks, trials, reps)
    data = {
        "machine": machine_info(),
        "matplotlib_import_ms": round(import_ms, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "peak_rss_mb_after_import": round(rss_before, 1),
        "cases": cases,
    }
    path = write_result("plots", data, quick=mode)
    print(json.dumps({k: v for k, v in data.items() if k != "machine"}, indent=2))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
