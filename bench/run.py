"""pairbench's benchmark suite, side by side with Inspect AI: ``make bench`` runs this.

    .venv/bin/python bench/run.py               # every case, medians of 3+ interleaved runs
    .venv/bin/python bench/run.py --quick       # one run each, smaller sizes (< 3 minutes)
    .venv/bin/python bench/run.py --big         # also case 2 at 10,000 trials
    .venv/bin/python bench/run.py --cases 1,4   # some cases only
    .venv/bin/python bench/run.py --table       # print the table of bench/results/*.json
    (quick runs write bench/results/quick/ and never overwrite the full figures)

Each case writes ``bench/results/<case>.json`` (raw samples, medians, machine, date);
``bench/results/summary.json`` has the table and the met / not met verdicts, and
``--profile`` (on by default outside quick mode) profiles each missed target into
``bench/results/profile_*.txt``. See bench/README.md for what each case measures.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    BENCH,
    BLAS_VARS,
    INSPECT_VERSION,
    PB_PY,
    WORK,
    log,
    machine_info,
    median,
    pb_env,
    results_dir,
    run_child,
    write_result,
)
from _runs import (
    ensure_inspect,
    inspect_ready,
    inspect_run,
    interleave,
    medians,
    pb_run,
    write_experiment,
)
from case_sleep import sleep_case

__all__ = ["write_experiment"]  # bench/integrity_overhead.py imports it from here
TARGETS = {
    "startup_ratio": 0.1,
    "startup_rss_mb": 80.0,
    "cpu_ratio": 0.1,
    "sleep_ratio": 1.1,
    "sleep_ratio_1000": 1.2,
    "mcp_added_ms": 0.05,
    "analysis_s": 5.0,
    "analysis_rss_mb": 1000.0,
    "viewer_s": 1.0,
}
"""Issue 35's goals (start-up and CPU per trial, ``*_ratio``, as a share of Inspect's in the
same run: no verdict when Inspect's half did not run), and the bench's own line where the
issue sets none (start-up RSS)."""


# -- cases ------------------------------------------------------------------------------------
def case1(reps: int, inspect: bool = True) -> dict[str, Any]:
    log("case 1: start-up (process start to first trial, peak RSS)")
    folder = WORK / "case1"
    write_experiment(folder / "pb", "bench-startup", "bench-noop", 1, 1, 1)
    tools: dict[str, Any] = {"pairbench": lambda: pb_run(folder / "pb", True, "pb")}
    if inspect:
        tools["inspect"] = lambda: inspect_run(
            folder / "inspect", "noop", {"n": 1}, 1, True, "inspect"
        )
    raw = interleave(reps, tools)
    keys = ["first_trial_s", "first_trial_peak_rss_mb", "wall_s", "cpu_s", "peak_rss_mb"]
    return {
        "case": "startup",
        "what": "process start to the first agent/solver start and the peak RSS up to then "
        "(VmHWM read by the first agent/solver call); whole-process wall, CPU and peak RSS. "
        "pairbench: `python -m pairbench run` of a 2-arm, 1-task, 1-trial "
        "experiment (one pair = 2 attempts) with the bench-noop agent; Inspect: "
        "`inspect eval` of a 1-sample task on mockllm/model.",
        "reps": reps,
        "samples": raw,
        "medians": {k: medians(v, keys) for k, v in raw.items()},
    }


def case2(
    reps: int, sizes: list[int], startup: dict[str, Any] | None, inspect: bool = True
) -> dict[str, Any]:
    log(f"case 2: harness CPU per trial, no-op agent, sizes {sizes}")
    folder = WORK / "case2"
    out: dict[str, Any] = {
        "case": "harness_cpu",
        "what": "CPU (user+sys of the process, from wait4) / trials, no-op agent, full "
        "transcripts and default durable writes, 10 in flight. pairbench: "
        "`python -m pairbench run` (2 arms x 10 tasks x N/20 trials = N attempts, each "
        "with its fsynced result, transcript and journal lines, then the report); "
        "Inspect: `inspect eval` of N samples on mockllm/model with default sample "
        "logging (.eval log). 'marginal' subtracts the start-up run's CPU (case 1).",
        "reps": reps,
        "sizes": {},
    }
    start_cpu = {}
    if startup:
        start_cpu = {k: v["cpu_s"] for k, v in startup["medians"].items()}
    start_trials = {"pairbench": 2, "inspect": 1}
    for n in sizes:
        write_experiment(folder / f"pb{n}", "bench-cpu", "bench-noop", 10, n // 20, 10)
        tools: dict[str, Any] = {"pairbench": lambda n=n: pb_run(folder / f"pb{n}", False, "pb")}
        if inspect:
            tools["inspect"] = lambda n=n: inspect_run(
                folder / f"inspect{n}", "noop", {"n": n}, 10, False, "inspect"
            )
        raw = interleave(reps, tools)
        for tool, samples in raw.items():
            for s in samples:
                s["cpu_per_trial_ms"] = 1000 * s["cpu_s"] / n
                if tool in start_cpu:
                    s["marginal_cpu_per_trial_ms"] = (
                        1000 * (s["cpu_s"] - start_cpu[tool]) / (n - start_trials[tool])
                    )
        keys = ["cpu_per_trial_ms", "marginal_cpu_per_trial_ms", "cpu_s", "wall_s", "peak_rss_mb"]
        out["sizes"][str(n)] = {
            "trials": n,
            "samples": raw,
            "medians": {k: medians(v, keys) for k, v in raw.items()},
        }
    return out


def case4(calls: int, rounds: int) -> dict[str, Any]:
    log(f"case 4: MCP per-call overhead, {calls} calls x {rounds} rounds per transport")
    WORK.mkdir(parents=True, exist_ok=True)
    env = pb_env({"BENCH_WORK": str(WORK)})
    proc = subprocess.run(
        [str(PB_PY), str(BENCH / "case_mcp.py"), "--calls", str(calls), "--rounds", str(rounds)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"case_mcp.py failed: {proc.stderr[-2000:]}")
    raw = json.loads(proc.stdout)
    keys = [
        "surface_median_ms",
        "raw_median_ms",
        "median_of_differences_ms",
        "difference_of_medians_ms",
    ]
    return {
        "case": "mcp_overhead",
        "what": "per call, pairbench McpSurface.call (transcript events, outcome, timing) "
        "minus a raw mcp ClientSession.call_tool, same tracker server tool "
        "(get_issue), calls alternated; added = median over rounds of the per-round "
        "median of adjacent-call differences. Inspect: not measured (no equivalent "
        "layer is compared here).",
        "calls_per_round": calls,
        "rounds": rounds,
        "samples": raw,
        "medians": {t: medians(v, keys) for t, v in raw.items()},
    }


def _analysis_child(args: list[str]) -> dict[str, Any]:
    env = pb_env()
    for v in BLAS_VARS:  # benchmark numpy on its native kernel (see .library/env README)
        env.pop(v, None)
    folder = WORK / "case5"
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "out.json"
    argv = [
        "/bin/sh",
        "-c",
        f'exec "$0" "$@" > {out}',
        str(PB_PY),
        str(BENCH / "case_analysis.py"),
        *args,
    ]
    res = run_child(argv, cwd=folder, env=env, log=folder / "err.log", timeout_s=1800)
    data = json.loads(out.read_text())
    data["process"] = res
    return data


def _report_child(run_dir: Path, reps: int) -> dict[str, Any]:
    env = pb_env()
    for v in BLAS_VARS:
        env.pop(v, None)
    argv = [str(PB_PY), "-m", "pairbench", "report", str(run_dir), "--bootstrap-reps", str(reps)]
    res = run_child(argv, cwd=run_dir.parent, env=env, log=run_dir.parent / "report.log")
    summary = json.loads((run_dir / "summary.json").read_text())
    pair = summary["pairs"][0]
    res["check"] = {
        "trials": summary["trials"],
        "tasks": len(summary["tasks"]),
        "pairs": pair["pairs"],
        "a_only": pair["a_only"],
        "b_only": pair["b_only"],
        "mcnemar_exact_p": pair["mcnemar_exact_p"],
        "task_clustered_reps": pair["difference"]["task_clustered"]["reps"],
    }
    return res


def case5(
    reps: int, mcnemar_cap: float, quick: bool, tasks: int = 5000, trials: int = 100
) -> dict[str, Any]:
    """1,000,000 records by default (2 arms x 5,000 tasks x 100 trials); toy: far fewer."""
    records = 2 * tasks * trials
    log(f"case 5: analysis and report of {records:,} synthetic records")
    size = ["--tasks", str(tasks), "--trials", str(trials)]
    stats = []
    for r in range(reps):
        log(f"  rep {r + 1}/{reps}: statistics on numpy arrays")
        stats.append(_analysis_child(["stats", "--mcnemar-cap", str(mcnemar_cap), *size]))
    folder = WORK / "case5"
    run_dir = folder / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    log(f"  writing a {records:,}-record run directory (run.json, journal, trials.npz; untimed)")
    written = _analysis_child(["write-run", "--out", str(run_dir), *size])
    reports = []
    for r in range(reps):
        log(f"  rep {r + 1}/{reps}: pairbench report (2,000 bootstrap reps) in a fresh process")
        reports.append(_report_child(run_dir, 2000))
    default = None
    if not quick:
        log("  once more with the report's default 10,000 bootstrap reps")
        default = _report_child(run_dir, 10_000)
    shutil.rmtree(run_dir, ignore_errors=True)
    core = [s["core_total_s"] for s in stats]
    return {
        "case": "analysis",
        "what": "(a) statistics alone on numpy arrays of 1,000,000 records (500,000 pairs, "
        "5,000 tasks x 100 trials): paired counts, exact McNemar, Newcombe + phi, "
        "task-clustered bootstrap (2,000 reps) of the mean paired success difference. "
        "(b) `pairbench report RUN --bootstrap-reps 2000` in a fresh process on a run "
        "directory of 1,000,000 records kept as the store keeps them (run.json with the "
        "full schedule, journal, trials.npz): everything in summary.json, report.md and "
        "report.html; wall time and peak RSS from wait4.",
        "reps": reps,
        "stats_samples": stats,
        "stats_medians": {
            "core_total_s": median(core),
            "core_total_is_extrapolated": any(s["core_total_is_extrapolated"] for s in stats),
            "core_total_without_mcnemar_s": median(
                [s["core_total_without_mcnemar_s"] for s in stats]
            ),
            "peak_rss_mb": median([s["process"]["peak_rss_mb"] for s in stats]),
            **{k: median([s["timings_s"][k] for s in stats]) for k in stats[0]["timings_s"]},
        },
        "run_written": {k: v for k, v in written.items() if k != "process"},
        "report_samples": reports,
        "report_medians": {
            "wall_s": median([r["wall_s"] for r in reports]),
            "cpu_s": median([r["cpu_s"] for r in reports]),
            "peak_rss_mb": median([r["peak_rss_mb"] for r in reports]),
        },
        "report_default_reps": default,
    }


# -- table ------------------------------------------------------------------------------------
def _fmt(x: float | None, unit: str = "", nd: int = 2) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.{nd}f}{unit}"


def _verdict(value: float | None, target: float) -> str:
    if value is None:
        return "n/a"
    return "met" if value <= target else "NOT met"


def build_table(quick: bool | str = False) -> dict[str, Any]:
    def load(name: str) -> dict[str, Any] | None:
        p = results_dir(quick) / f"{name}.json"
        return json.loads(p.read_text()) if p.exists() else None

    rows: list[dict[str, Any]] = []

    def row(
        case: str,
        metric: str,
        pb: float | None,
        insp: float | None,
        target: float | None,
        unit: str,
        nd: int = 2,
        note: str = "",
        relative: bool = False,
    ) -> None:
        ratio = pb / insp if pb is not None and insp else None
        rows.append(
            {
                "case": case,
                "metric": metric,
                "pairbench": pb,
                "inspect": insp,
                "ratio": ratio,
                "target": target,
                "target_is_ratio": relative,
                "verdict": (
                    _verdict(ratio if relative else pb, target) if target is not None else ""
                ),
                "unit": unit,
                "nd": nd,
                "note": note,
            }
        )

    c1 = load("startup")
    if c1:
        m = c1["medians"]
        row(
            "1 start-up",
            "start to first trial (s)",
            m["pairbench"]["first_trial_s"],
            m.get("inspect", {}).get("first_trial_s"),
            TARGETS["startup_ratio"],
            " s",
            relative=True,
        )
        if m["pairbench"].get("first_trial_peak_rss_mb") is not None:
            row(
                "1 start-up",
                "peak RSS at first trial (MB)",
                m["pairbench"]["first_trial_peak_rss_mb"],
                m.get("inspect", {}).get("first_trial_peak_rss_mb"),
                TARGETS["startup_rss_mb"],
                " MB",
                0,
            )
        row(
            "1 start-up",
            "peak RSS, whole process (MB)",
            m["pairbench"]["peak_rss_mb"],
            m.get("inspect", {}).get("peak_rss_mb"),
            None
            if m["pairbench"].get("first_trial_peak_rss_mb") is not None
            else TARGETS["startup_rss_mb"],
            " MB",
            0,
            note="pairbench: includes writing the report (numpy, jinja2) at the end",
        )
        row(
            "1 start-up",
            "whole process wall (s)",
            m["pairbench"]["wall_s"],
            m.get("inspect", {}).get("wall_s"),
            None,
            " s",
        )
    c2 = load("harness_cpu")
    if c2:
        for n, d in c2["sizes"].items():
            m = d["medians"]
            row(
                f"2 CPU/trial n={n}",
                "CPU per trial (ms)",
                m["pairbench"]["cpu_per_trial_ms"],
                m.get("inspect", {}).get("cpu_per_trial_ms"),
                TARGETS["cpu_ratio"],
                " ms",
                relative=True,
            )
            row(
                f"2 CPU/trial n={n}",
                "marginal CPU per trial (ms)",
                m["pairbench"]["marginal_cpu_per_trial_ms"],
                m.get("inspect", {}).get("marginal_cpu_per_trial_ms"),
                None,
                " ms",
            )
    c3 = load("sleep_concurrency")
    if c3:
        for c, d in c3["concurrency"].items():
            m = d["medians"]
            row(
                f"3 sleep c={c}",
                f"wall after start-up / ideal {d['ideal_s']:g} s",
                m["pairbench"]["ratio_after_startup"],
                m.get("inspect", {}).get("ratio_after_startup"),
                TARGETS["sleep_ratio"],
                "x",
                note=f"pairbench floor {d['schedule_floor_s']['pairbench']:g} s: "
                f"{_fmt(m['pairbench']['ratio_to_schedule_floor'], 'x')} of it",
            )
            row(
                f"3 sleep c={c}",
                "span first→last trial / ideal",
                m["pairbench"]["ratio_span"],
                m.get("inspect", {}).get("ratio_span"),
                None,
                "x",
            )
    c9 = load("sleep_concurrency_1000")
    if c9:
        for c, d in c9["concurrency"].items():
            m = d["medians"]
            row(
                f"9 sleep n={c9['trials']} c={c}",
                f"wall after start-up / ideal {d['ideal_s']:g} s",
                m["pairbench"]["ratio_after_startup"],
                m.get("inspect", {}).get("ratio_after_startup"),
                TARGETS["sleep_ratio_1000"],
                "x",
                note=f"CPU {_fmt(m['pairbench']['cpu_s'], ' s')} for {c9['trials']} trials",
            )
    c4 = load("mcp_overhead")
    if c4:
        for t in ("stdio", "http"):
            m = c4["medians"][t]
            row(
                f"4 MCP {t}",
                "added per call (ms)",
                m["median_of_differences_ms"],
                None,
                TARGETS["mcp_added_ms"],
                " ms",
                3,
                note=f"raw call {_fmt(m['raw_median_ms'], ' ms', 3)}, "
                f"diff of medians {_fmt(m['difference_of_medians_ms'], ' ms', 3)}",
            )
    c5 = load("analysis")
    if c5:
        sm = c5["stats_medians"]
        row(
            "5 analysis 1M (a)",
            "stats time (s)"
            + (" [McNemar part extrapolated]" if sm["core_total_is_extrapolated"] else ""),
            sm["core_total_s"],
            None,
            TARGETS["analysis_s"],
            " s",
            1,
            note=f"without McNemar {_fmt(sm['core_total_without_mcnemar_s'], ' s')}",
        )
        row(
            "5 analysis 1M (a)",
            "peak RSS (MB)",
            sm["peak_rss_mb"],
            None,
            TARGETS["analysis_rss_mb"],
            " MB",
            0,
        )
        rm = c5.get("report_medians")
        if rm:
            row(
                "5 report 1M (b)",
                "`pairbench report`, 2,000 reps: wall (s)",
                rm["wall_s"],
                None,
                TARGETS["analysis_s"],
                " s",
                2,
                note=f"from trials.npz ({_fmt(c5['run_written']['trials_npz_mb'], ' MB', 0)}); "
                f"CPU {_fmt(rm['cpu_s'], ' s')}",
            )
            row(
                "5 report 1M (b)",
                "`pairbench report`: peak RSS (MB)",
                rm["peak_rss_mb"],
                None,
                TARGETS["analysis_rss_mb"],
                " MB",
                0,
            )
            d = c5.get("report_default_reps")
            if d:
                row(
                    "5 report 1M (b)",
                    "same with the default 10,000 reps: wall (s)",
                    d["wall_s"],
                    None,
                    None,
                    " s",
                    2,
                    note=f"peak RSS {_fmt(d['peak_rss_mb'], ' MB', 0)}",
                )
    c8 = load("viewer")
    if c8:
        t = c8["timings_s"]
        size = f"{c8['run_written']['records']:,} trials"
        row(
            "8 view " + size,
            "first useful page, cold (s)",
            t["first_useful_page_cold_s"],
            None,
            TARGETS["viewer_s"],
            " s",
            note=f"warm {_fmt(t['first_useful_page_warm_s'], ' s')}",
        )
        slowest = max(v for k, v in t.items() if not k.startswith("first_useful"))
        row(
            "8 view " + size,
            "slowest of paging, filters, transcript (s)",
            slowest,
            None,
            TARGETS["viewer_s"],
            " s",
        )
        row(
            "8 view " + size, "server peak RSS (MB)", c8["server_peak_rss_mb"], None, None, " MB", 0
        )
    return {"rows": rows, "targets": TARGETS}


def print_table(table: dict[str, Any]) -> None:
    head = ["case", "metric", "pairbench", "Inspect", "pb/Inspect", "target", "verdict"]
    lines = []
    for r in table["rows"]:
        lines.append(
            [
                r["case"],
                r["metric"],
                _fmt(r["pairbench"], r["unit"], r["nd"]),
                _fmt(r["inspect"], r["unit"], r["nd"]) if r["inspect"] is not None else "—",
                _fmt(r["ratio"], "x") if r["ratio"] is not None else "—",
                (
                    ""
                    if r["target"] is None
                    else f"≤ {r['target']:g}x Inspect"
                    if r.get("target_is_ratio")
                    else f"≤ {r['target']:g}"
                ),
                r["verdict"],
            ]
        )
    widths = (
        [max(len(h), *(len(x[i]) for x in lines)) for i, h in enumerate(head)]
        if lines
        else [len(h) for h in head]
    )
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*head))
    print(fmt.format(*("-" * w for w in widths)))
    for x in lines:
        print(fmt.format(*x))
    notes = [f"  {r['case']}: {r['note']}" for r in table["rows"] if r["note"]]
    if notes:
        print("notes:")
        print("\n".join(notes))


# -- main -------------------------------------------------------------------------------------
def case8(mode: str) -> dict[str, Any]:
    """``pairbench view`` on a 100,000-trial run (10,000 in quick mode), in Chromium."""
    tasks = {"toy": 2, "quick": 50}.get(mode, 500)
    log(f"case 8: pairbench view on {2 * tasks * 100:,} trials in headless Chromium")
    folder = WORK / "case8"
    shutil.rmtree(folder, ignore_errors=True)
    out = WORK / "case8.json"
    argv = [str(PB_PY), str(BENCH / "case_viewer.py"), "--work", str(folder),
            "--tasks", str(tasks), "--trials", "100"]  # fmt: skip
    with open(out, "w") as fh:
        subprocess.run(argv, env=pb_env(), stdout=fh, check=True, timeout=1800)
    shutil.rmtree(folder, ignore_errors=True)
    data: dict[str, Any] = json.loads(out.read_text())
    return data


MODES = {
    # mode: case 2 sizes, case 3 (trials, sleep), case 4 (calls, rounds), case 5 (tasks, trials)
    "full": {"c2": [1000], "c3": (1000, 1.0), "c4": (1000, 3), "c5": (5000, 100)},
    "quick": {"c2": [1000], "c3": (200, 1.0), "c4": (200, 1), "c5": (5000, 100)},
    # Not a measurement: every case once at the smallest size that runs all of its code
    # (tests/bench/ runs this, so a change cannot break the bench in silence).
    "toy": {"c2": [40], "c3": (40, 0.05), "c4": (20, 1), "c5": (5, 20)},
}
CASE9 = {"full": (10_000, 1000, 1.0), "quick": (2000, 1000, 1.0), "toy": (40, 20, 0.05)}
"""Case 9: (trials, concurrency, sleep); with --big (or named in --cases)."""


PROFILED = {"1", "2", "3", "4", "5", "9"}
"""Cases bench/profile_hotspots.py profiles."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one run each, smaller sizes")
    ap.add_argument(
        "--toy",
        action="store_true",
        help="every case once at toy size (a check that it runs, not a measurement)",
    )
    ap.add_argument(
        "--big", action="store_true", help="also case 2 at 10,000 trials, cases 7 and 9"
    )
    ap.add_argument("--cases", default=None, help="default 1,2,3,4,5,6,8 (and 7,9 with --big)")
    ap.add_argument(
        "--no-inspect",
        action="store_true",
        help="pairbench's half only (toy runs: also when bench/.venv-inspect is missing)",
    )
    ap.add_argument(
        "--reps",
        type=int,
        default=None,
        help="interleaved runs (default 3; 5 for start-up; 1 in quick and toy mode)",
    )
    ap.add_argument(
        "--profile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="profile missed targets (default: on, off in quick and toy mode)",
    )
    ap.add_argument(
        "--table",
        action="store_true",
        help="run nothing: print the table of the results there and re-judge their "
        "summary.json against today's targets",
    )
    a = ap.parse_args()
    mode = "toy" if a.toy else "quick" if a.quick else "full"
    out_dir: bool | str = mode if mode != "full" else False
    if a.table:
        table = build_table(out_dir)
        print_table(table)
        written = results_dir(out_dir) / "summary.json"
        if written.exists():  # the machine and mode the results were measured on stay
            was = json.loads(written.read_text(encoding="utf-8"))
            write_result("summary", {"machine": was.get("machine"), "mode": was.get("mode"),
                                     **table}, out_dir)  # fmt: skip
        return
    if not PB_PY.exists():
        sys.exit(f"{PB_PY} is missing: run `make install` first (make bench does)")
    default = ("1,2,3,4,5,6" if mode == "toy" else "1,2,3,4,5,6,8") + (",7,9" if a.big else "")
    cases = {c.strip() for c in (a.cases or default).split(",")}
    quick = mode != "full"
    sizes = MODES[mode]
    reps = a.reps or (1 if quick else 3)
    WORK.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    meta = {"machine": machine, "mode": mode, "inspect_ai_version_pinned": INSPECT_VERSION}
    # A toy run never installs Inspect: it runs Inspect's half only where the venv is made.
    inspect = not a.no_inspect and (mode != "toy" or inspect_ready())
    if inspect and cases & {"1", "2", "3", "9"}:
        ensure_inspect()
        machine["inspect_ai"] = machine_info()["inspect_ai"]
    startup = None
    if "1" in cases:
        startup = case1(a.reps or (1 if mode == "toy" else 3 if quick else 5), inspect) | meta
        write_result("startup", startup, out_dir)
    elif (results_dir(out_dir) / "startup.json").exists():
        startup = json.loads((results_dir(out_dir) / "startup.json").read_text())
    if "2" in cases:
        n2 = sizes["c2"] + ([10000] if a.big else [])
        res = case2(reps, n2, startup, inspect) | meta
        if not a.big:
            res["note_10000"] = (
                "10,000 trials not run (use --big / make bench BIG=1): about "
                "2 x 3 runs of 35 s (pairbench) and 110 s (Inspect), ~7 min"
            )
        write_result("harness_cpu", res, out_dir)
    if "3" in cases:
        n3, sleep_s = sizes["c3"]
        conc = [10] if mode == "toy" else [50, 200]
        res = sleep_case("sleep_concurrency", "case3", reps, n3, conc, sleep_s, inspect) | meta
        write_result("sleep_concurrency", res, out_dir)
    if "4" in cases:
        calls, rounds = sizes["c4"]
        write_result("mcp_overhead", case4(calls, rounds if quick else reps) | meta, out_dir)
    if "5" in cases:
        tasks, trials = sizes["c5"]
        res = case5(reps, 10.0 if quick else 60.0, quick, tasks, trials) | meta
        write_result("analysis", res, out_dir)
    if "6" in cases:
        script_case("plots", mode)
    if "7" in cases:
        script_case("model", mode)
    if "8" in cases:
        write_result("viewer", case8(mode) | meta, out_dir)
    if "9" in cases:
        n9, c9, sleep_s = CASE9[mode]
        res = sleep_case("sleep_concurrency_1000", "case9", reps, n9, [c9], sleep_s, inspect) | meta
        write_result("sleep_concurrency_1000", res, out_dir)
    table = build_table(out_dir)
    write_result("summary", {"machine": machine, "mode": mode, **table}, out_dir)
    print()
    print(
        f"pairbench bench ({mode}), {machine['date']}, {machine['cpu']}, "
        f"{machine['cores']} cores, inspect-ai {machine.get('inspect_ai')}"
    )
    print_table(table)
    do_profile = a.profile if a.profile is not None else not quick
    if do_profile:
        missed = sorted({r["case"].split()[0] for r in table["rows"] if r["verdict"] == "NOT met"})
        # Case 8's server is its own process, not profiled here (bench/README.md, case 8).
        missed = [c for c in missed if c in PROFILED]
        if missed:
            log(f"profiling missed targets (cases {', '.join(missed)})")
            subprocess.run(
                [str(PB_PY), str(BENCH / "profile_hotspots.py"), *missed], env=pb_env(), check=False
            )


def script_case(name: str, mode: str) -> None:
    """Cases 6 (plots) and 7 (the real model) run as their own scripts, in the pairbench venv.

    Case 7 needs ``pairbench model install``; a full run without the model says so and goes
    on (a toy run uses the local chat double in its place, see bench/model.py)."""
    argv = [str(PB_PY), str(BENCH / f"{name}.py")] + ([f"--{mode}"] if mode != "full" else [])
    if name == "model" and mode != "toy" and not _model_installed():
        log("case 7: skipped, the model is not installed (`make model`, then run it again)")
        return
    log(f"case {'6' if name == 'plots' else '7'}: {' '.join(argv[1:])}")
    done = subprocess.run(argv, env=pb_env(), check=False, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"bench/{name}.py exited {done.returncode}")


def _model_installed() -> bool:
    probe = (
        "from pairbench.model._build import cached_build; "
        "from pairbench.model._weights import installed_model; "
        "print(cached_build() is not None and installed_model() is not None)"
    )
    done = subprocess.run(
        [str(PB_PY), "-c", probe], env=pb_env(), capture_output=True, text=True, check=False
    )
    return done.stdout.strip() == "True"


if __name__ == "__main__":
    main()
