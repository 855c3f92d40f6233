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
``summary``  (b) ``pairbench.report.build_summary`` (every number of summary.json) on
             ``--records`` synthetic ``TrialResult`` records (2 arms, records/200 tasks,
             100 trials, declared comparison, measured wall time and tokens), plus the cost
             of parsing them from JSON as ``RunDir.results()`` does (disk reads excluded).
             The 1,000,000-record figure is extrapolated by the caller, never measured.
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


def run_stats(cap_s: float, reps: int) -> dict[str, Any]:
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
    d = synthetic_arrays(TASKS, TRIALS, SEED)
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
        "records": 2 * TASKS * TRIALS,
        "pairs": TASKS * TRIALS,
        "tasks": TASKS,
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


def synthetic_records(n_records: int, seed: int) -> tuple[dict[str, Any], list[Any]]:
    from pairbench.store._records import TrialResult

    tasks = max(2, n_records // (2 * TRIALS))
    d = synthetic_arrays(tasks, TRIALS, seed)
    run_id = "bench-summary-20261129T000000Z-000000"

    def metric(v: float | None, source: str) -> dict[str, Any]:
        if v is None:
            return {"provenance": "missing", "reason": "not reported"}
        return {"value": v, "provenance": "measured", "source": source}

    records = []
    for arm in ("a", "b"):
        passed, lat = d[arm], d[f"lat_{arm}"]
        for i in range(tasks * TRIALS):
            ok = bool(passed[i])
            outcome = "passed" if ok else "failed"
            records.append(
                TrialResult.model_validate(
                    {
                        "run_id": run_id,
                        "experiment": "bench-summary",
                        "arm": arm,
                        "task": f"t{int(d['task'][i])}",
                        "trial": i % TRIALS,
                        "labels": {"tier": int(d["task"][i]) % 3 + 1},
                        "seed": i,
                        "model_seed": i,
                        "attempt": 1,
                        "start_order": 0 if arm == "a" else 1,
                        "outcome": outcome,
                        "reason": "answer matches" if ok else "wrong answer",
                        "agent": "bench-noop",
                        "grade": {"outcome": outcome, "reason": ""},
                        "metrics": {
                            "wall_ms": metric(float(lat[i]), "pairbench client clock"),
                            "cold_start_ms": metric(None, ""),
                            "turns": metric(3.0, "bench"),
                            "input_tokens": metric(float(2000 + i % 500), "provider usage"),
                            "output_tokens": metric(float(300 + i % 50), "provider usage"),
                            "cost_usd": metric(0.01, "provider usage"),
                        },
                        "validity": {"valid": True},
                        "security": {},
                        "final_answer": "PASS" if ok else "nope",
                    }
                )
            )
    run = {
        "run_id": run_id,
        "experiment": {"id": "bench-summary", "version": "1"},
        "arms": ["a", "b"],
        "comparisons": [["a", "b"]],
        "tasks": [{"id": f"t{t}", "labels": {"tier": t % 3 + 1}} for t in range(tasks)],
        "run_seed": 1,
        "planned_trials": len(records),
        "policies": {"budget": {"trial_timeout_s": 120}},
        "status": "complete",
    }
    return run, records


def _shim_overflow() -> None:
    """BENCH-ONLY, in this process: ``order_statistic_rank`` without its float overflow.

    ``src/pairbench/analysis/_median.py`` computes ``1.0 - 2.0 * cdf_count / total``;
    ``2.0 * cdf_count`` turns a >1024-bit integer into a float and raises OverflowError once
    n exceeds about 1,030 pairs, so ``build_summary`` cannot report a run that big. The
    shim is the same loop with ``2 * cdf_count / total`` (integer true division, correctly
    rounded); it lets the bench time the rest of ``build_summary`` past that size. Nothing
    under ``src/`` is changed.
    """
    import pairbench.analysis._median as med
    import pairbench.report._paired_metrics as pm

    def order_statistic_rank(n: int, confidence: float) -> tuple[int, float] | None:
        med._check_confidence(confidence)
        alpha = 1.0 - confidence
        total = 1 << n
        best: tuple[int, float] | None = None
        cdf_count = 0
        for r in range(1, n // 2 + 1):
            cdf_count += math.comb(n, r - 1)
            if 2 * cdf_count / total > alpha:
                break
            best = (r, 1.0 - 2 * cdf_count / total)
        return best

    med.order_statistic_rank = order_statistic_rank
    pm.order_statistic_rank = order_statistic_rank


def run_summary(n_records: int, shim: bool) -> dict[str, Any]:
    from pairbench.report import build_summary
    from pairbench.store._records import TrialResult

    if shim:
        _shim_overflow()

    rss_import = _rss_mb()
    t0 = time.perf_counter()
    run, records = synthetic_records(n_records, SEED)
    gen_s = time.perf_counter() - t0
    rss_records = _rss_mb()
    blobs = [(r.model_dump_json(indent=2) + "\n").encode() for r in records]
    t0 = time.perf_counter()
    parsed = [TrialResult.model_validate_json(b) for b in blobs]
    parse_s = time.perf_counter() - t0
    del blobs, parsed
    t0 = time.perf_counter()
    try:
        summary = build_summary(run, records, [])
    except Exception as exc:  # recorded, not hidden: the bench reports it as a failure
        return {
            "records": len(records),
            "shim_overflow": shim,
            "parse_json_s": parse_s,
            "error": f"{type(exc).__name__}: {exc}",
            "failed_after_s": time.perf_counter() - t0,
        }
    summary_s = time.perf_counter() - t0
    pair = summary["pairs"][0]
    return {
        "shim_overflow": shim,
        "records": len(records),
        "tasks": len(run["tasks"]),
        "generate_s_untimed": gen_s,
        "parse_json_s": parse_s,
        "build_summary_s": summary_s,
        "peak_rss_mb": _rss_mb(),
        "rss_after_imports_mb": rss_import,
        "rss_after_records_mb": rss_records,
        "check": {
            "pairs": pair["pairs"],
            "a_only": pair["a_only"],
            "b_only": pair["b_only"],
            "mcnemar_exact_p": pair["mcnemar_exact_p"],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["stats", "summary"])
    ap.add_argument("--records", type=int, default=20000)
    ap.add_argument("--mcnemar-cap", type=float, default=60.0)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--shim-overflow", action="store_true")
    a = ap.parse_args()
    if a.mode == "stats":
        out = run_stats(a.mcnemar_cap, a.reps)
    else:
        out = run_summary(a.records, a.shim_overflow)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
