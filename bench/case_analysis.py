"""Case 5: analysis of 1,000,000 synthetic trial records (2 arms, 5,000 tasks, 100 trials).

Run with pairbench's venv; prints one JSON object on stdout. Two modes:

``stats``    (a) the statistics alone on numpy arrays, the shape a columnar trial table
             would hand them: paired counts, exact McNemar, Newcombe's paired interval (with
             phi), and the task-clustered bootstrap (2,000 reps) of the mean paired success
             difference, which is what the report computes for success. Extras timed apart
             (not in the target total): the order-statistic median of paired latency
             differences (what the report shows for metrics) and a 2,000-rep cluster
             bootstrap of that median. Synthetic-data generation is not timed.
             ``mcnemar_exact`` sums big-integer binomial coefficients; it is probed at small
             discordant counts first and run at the full count in a child process with a
             time cap; past the cap its time is extrapolated from the probes (labelled).
``write-run`` (b) writes a run directory of ``--tasks x --trials`` pairs (default 5,000 x 100:
             1,000,000 records) the way the store keeps it: run.json with the full
             schedule, a journal, and the trial table ``trials.npz``. ``bench/run.py``
             then times ``pairbench report`` on it in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import resource
import sys
import time
from typing import Any

import numpy as np

TASKS, TRIALS = 5000, 100
SEED = 20261129


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic_arrays(tasks: int, trials: int, seed: int) -> dict[str, np.ndarray]:
    """Correlated pass/fail per pair (task effect + shared trial noise) and latencies."""
    rng = np.random.default_rng(seed)
    n = tasks * trials
    task = np.repeat(np.arange(tasks, dtype=np.int64), trials)
    difficulty = rng.normal(0.0, 1.0, tasks)[task]
    shared = rng.normal(0.0, 1.0, n)
    a = (difficulty + 0.7 * shared + rng.normal(0, 0.7, n)) < 0.25
    b = (difficulty + 0.7 * shared + rng.normal(0, 0.7, n)) < 0.45
    lat_a = rng.lognormal(np.log(1200.0), 0.4, n)
    lat_b = rng.lognormal(np.log(1000.0), 0.4, n)
    return {"task": task, "a": a, "b": b, "lat_a": lat_a, "lat_b": lat_b}


def _mcnemar_child(a_only: int, b_only: int, q: Any) -> None:
    from pairbench.analysis import mcnemar_exact

    t0 = time.perf_counter()
    p = mcnemar_exact(a_only, b_only)
    q.put((time.perf_counter() - t0, p))


def _mcnemar(a_only: int, b_only: int, cap_s: float) -> dict[str, Any]:
    """Time ``mcnemar_exact`` at probes and at full size (capped, in a child process)."""
    from pairbench.analysis import mcnemar_exact

    n = a_only + b_only
    share = a_only / n if n else 0.5
    probes = []
    for m in (1250, 2500, 5000):
        if m >= n:
            break
        k = round(m * share)
        t0 = time.perf_counter()
        mcnemar_exact(k, m - k)
        probes.append({"discordant": m, "s": time.perf_counter() - t0})
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=_mcnemar_child, args=(a_only, b_only, q))
    proc.start()
    proc.join(cap_s)
    out: dict[str, Any] = {"discordant": n, "probes": probes, "cap_s": cap_s}
    if proc.is_alive():
        proc.kill()
        proc.join()
        out["timed_out"] = True
        if len(probes) >= 2:
            (x0, y0), (x1, y1) = [(p["discordant"], p["s"]) for p in probes[-2:]]
            slope = math.log(y1 / y0) / math.log(x1 / x0)
            out["scaling_exponent"] = slope
            out["extrapolated_s"] = y1 * (n / x1) ** slope
        out["s"] = None
    else:
        elapsed, p = q.get()
        out.update(timed_out=False, s=elapsed, p=p)
    return out


def run_stats(cap_s: float, reps: int, tasks: int = TASKS, trials: int = TRIALS) -> dict[str, Any]:
    from pairbench.analysis import (
        cluster_bootstrap,
        cluster_bootstrap_paired,
        paired_counts,
        paired_median_difference,
        paired_proportion_difference,
        phi_correlation,
    )

    try:
        from threadpoolctl import threadpool_info

        blas = [
            {k: i.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
            for i in threadpool_info()
        ]
    except ImportError:
        blas = "threadpoolctl not installed"
    rss_import = _rss_mb()
    t0 = time.perf_counter()
    d = synthetic_arrays(tasks, trials, SEED)
    gen_s = time.perf_counter() - t0
    rss_data = _rss_mb()
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    counts = paired_counts(d["a"], d["b"])
    timings["paired_counts"] = time.perf_counter() - t0

    mcn = _mcnemar(counts.a_only, counts.b_only, cap_s)

    t0 = time.perf_counter()
    diff = paired_proportion_difference(*counts, confidence=0.95)
    phi = phi_correlation(*counts)
    timings["newcombe_and_phi"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    success_diff = d["a"].astype(np.float64) - d["b"].astype(np.float64)
    boot = cluster_bootstrap(success_diff, d["task"], "mean", reps=reps, seed=1)
    timings["cluster_bootstrap_mean_success_diff"] = time.perf_counter() - t0

    extras: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        med = paired_median_difference(d["lat_a"], d["lat_b"], 0.95)
        med_values: Any = [med.estimate, med.low, med.high]
        extras["paired_median_difference_latency"] = time.perf_counter() - t0
    except Exception as exc:
        med_values = None
        extras["paired_median_difference_latency"] = {
            "error": f"{type(exc).__name__}: {exc}",
            "failed_after_s": time.perf_counter() - t0,
        }
    t0 = time.perf_counter()
    bmed = cluster_bootstrap_paired(d["lat_a"], d["lat_b"], d["task"], "median", reps=reps, seed=2)
    extras["cluster_bootstrap_median_latency_diff"] = time.perf_counter() - t0

    core = sum(timings.values()) + (
        mcn["s"] if mcn["s"] is not None else mcn.get("extrapolated_s") or math.inf
    )
    return {
        "records": 2 * tasks * trials,
        "pairs": tasks * trials,
        "tasks": tasks,
        "bootstrap_reps": reps,
        "generate_s_untimed": gen_s,
        "timings_s": timings,
        "mcnemar": mcn,
        "core_total_s": core,
        "core_total_is_extrapolated": mcn["s"] is None,
        "core_total_without_mcnemar_s": sum(timings.values()),
        "extras_s": extras,
        "peak_rss_mb": _rss_mb(),
        "rss_after_imports_mb": rss_import,
        "rss_after_data_mb": rss_data,
        "blas": blas,
        "values": {
            "counts": counts._asdict(),
            "newcombe": [diff.difference, diff.low, diff.high],
            "phi": phi,
            "bootstrap_mean": [boot.estimate, boot.low, boot.high],
            "median_diff": med_values,
            "bootstrap_median": [bmed.estimate, bmed.low, bmed.high],
        },
    }


def write_run(folder: str, tasks: int, trials: int, seed: int) -> dict[str, Any]:
    """A run directory as the store keeps it for ``tasks x trials`` pairs of arms a and b.

    ``run.json`` (with the full schedule, as the runner writes it), a journal, and the trial
    table ``trials.npz`` written by ``TrialTable.to_bytes`` through ``write_atomic`` (what
    ``load_table`` writes after a run), built from numpy columns rather than from
    ``tasks x trials x 2`` journal rows so that generating it takes seconds. Each record
    has a measured wall time, agent time, tokens, cost, connect time and two timed tool
    calls, a validity verdict, a seeding status and a tier label.
    """
    from pathlib import Path

    from pairbench.store import Journal, RunDir, write_atomic
    from pairbench.store._events import RunStarted
    from pairbench.store._table import TrialTable

    root = Path(folder)
    root.mkdir(parents=True, exist_ok=False)
    d = synthetic_arrays(tasks, trials, seed)
    rng = np.random.default_rng(seed + 1)
    pairs = tasks * trials
    n = 2 * pairs
    arm = np.repeat(np.arange(2, dtype=np.int32), pairs)
    task = np.tile(d["task"].astype(np.int32), 2)
    trial = np.tile(np.arange(pairs, dtype=np.int32) % trials, 2)
    passed = np.concatenate([d["a"], d["b"]])
    wall = np.concatenate([d["lat_a"], d["lat_b"]])
    measured = np.zeros(n, dtype=np.int32)  # code 0 = "measured" in every *_prov column
    cols: dict[str, Any] = {
        "arm": arm,
        "task": task,
        "trial": trial,
        "attempt": np.ones(n, dtype=np.int32),
        "kept": np.zeros(n, dtype=np.bool_),
        "outcome": np.where(passed, 0, 1).astype(np.int32),
        "start_order": np.where(trial % 2 == 0, arm, 1 - arm).astype(np.int16),
        "simulated": np.zeros(n, dtype=np.bool_),
        "reason": np.where(passed, 0, 1).astype(np.int32),
        "answer": np.full(n, -1, dtype=np.int32),
        "labels": (task % 3).astype(np.int32),
        "valid": np.ones(n, dtype=np.int8),
        "security": np.ones(n, dtype=np.bool_),
        "injection": np.full(n, -1, dtype=np.int8),
        "secret": np.zeros(n, dtype=np.bool_),
        "seeding": np.zeros(n, dtype=np.int32),
        "seeding_reason": np.full(n, -1, dtype=np.int32),
        "metrics": np.ones(n, dtype=np.bool_),
        "transport_failures": np.zeros(n, dtype=np.int32),
        "failure_kinds": np.full(n, -1, dtype=np.int32),
        "tool_client_ms": rng.lognormal(np.log(80.0), 0.3, n),
        "connect_ms": rng.lognormal(np.log(40.0), 0.3, n),
    }
    values = {
        "wall_ms": wall,
        "agent_ms": wall * 0.9,
        "turns": rng.integers(2, 9, n).astype(np.float64),
        "input_tokens": rng.integers(1500, 4000, n).astype(np.float64),
        "output_tokens": rng.integers(200, 600, n).astype(np.float64),
        "cost_usd": rng.integers(1, 300, n) / 10000.0,
        "cold_start_ms": rng.lognormal(np.log(20.0), 0.5, n),
    }
    categories: dict[str, list[str]] = {
        "arm": ["a", "b"],
        "task": [f"t{t}" for t in range(tasks)],
        "outcome": ["passed", "failed"],
        "reason": ["answer matches", "wrong answer"],
        "answer": [],
        "labels": [json.dumps({"tier": t + 1}) for t in range(3)],
        "seeding": ["seeded"],
        "seeding_reason": [],
        "failure_kinds": [],
    }
    for name, v in values.items():
        cols[name] = v
        cols[f"{name}_prov"] = measured
        cols[f"{name}_note"] = measured
        categories[f"{name}_prov"] = ["measured"]
        categories[f"{name}_note"] = ["provider usage" if "token" in name else "pairbench clock"]
    calls = {
        "row": np.repeat(np.arange(n, dtype=np.int64), 2),
        "client_ms": rng.lognormal(np.log(80.0), 0.3, 2 * n),
        "server_ms": rng.lognormal(np.log(5.0), 0.3, 2 * n),
    }
    table = TrialTable(cols, categories, calls)
    run_id = "bench-analysis-20261129T000000Z-000000"
    journal = Journal(root / "journal.jsonl")
    journal.append(RunStarted(run_id=run_id, planned=n))
    journal.close()
    schedule = {
        "experiment": "bench-analysis",
        "run_seed": 1,
        "order_policy": "alternate",
        "pairs": [
            {
                "index": i,
                "task": f"t{int(d['task'][i])}",
                "trial": i % trials,
                "seed": i,
                "model_seed": i,
                "order": ["a", "b"] if (i % trials) % 2 == 0 else ["b", "a"],
            }
            for i in range(pairs)
        ],
    }
    run = {
        "schema_id": "pairbench.run/1",
        "run_id": run_id,
        "experiment": {"id": "bench-analysis", "version": "1", "description": "case 5"},
        "arms": ["a", "b"],
        "comparisons": [["a", "b"]],
        "tasks": [{"id": f"t{t}", "labels": {"tier": t % 3 + 1}} for t in range(tasks)],
        "run_seed": 1,
        "schedule": schedule,
        "planned_trials": n,
        "policies": {"budget": {"trial_timeout_s": 120}},
        "status": "complete",
        "started_at": "2026-11-29T00:00:00+00:00",
        "ended_at": "2026-11-29T01:00:00+00:00",
    }
    write_atomic(root / "run.json", (json.dumps(run) + "\n").encode())
    from pairbench.store._load_table import _journal_mark

    write_atomic(root / "trials.npz", table.to_bytes(_journal_mark(RunDir(root))))
    return {
        "records": n,
        "tasks": tasks,
        "trials": trials,
        "calls": 2 * n,
        "trials_npz_mb": (root / "trials.npz").stat().st_size / 1e6,
        "run_json_mb": (root / "run.json").stat().st_size / 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["stats", "write-run"])
    ap.add_argument("--mcnemar-cap", type=float, default=60.0)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--out", help="write-run: the run directory to create")
    ap.add_argument("--tasks", type=int, default=TASKS)
    ap.add_argument("--trials", type=int, default=TRIALS)
    a = ap.parse_args()
    if a.mode == "stats":
        out = run_stats(a.mcnemar_cap, a.reps, a.tasks, a.trials)
    else:
        out = write_run(a.out, a.tasks, a.trials, SEED)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
