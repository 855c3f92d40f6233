"""Cases 3 and 8: N agents that each sleep (a stand-in for a model's latency) at concurrency C.

Case 3 is 1,000 agents of 1 s at concurrency 50 and 200, case 9 is 10,000 at 1,000 (with
``--big``): the wall time after start-up over the ideal N x sleep / C, pairbench and Inspect
(``--max-samples C --max-connections C``) side by side. Run through ``bench/run.py``.
"""

from __future__ import annotations

import math
from typing import Any

from _common import WORK, log
from _runs import inspect_run, interleave, medians, pb_run, write_experiment

WHAT = (
    "N trials of an agent that sleeps S s. 'after start-up' = process wall minus time to the "
    "first trial (so it includes writing results and the report/log at the end); 'span' = "
    "first agent start to last agent end. Ideal = N x S / concurrency seconds. pairbench's "
    "concurrency counts agent attempts in flight, as Inspect's --max-samples counts samples "
    "(and --max-connections is set as high); a pair runs its 2 arms one after the other, so "
    "its schedule floor is max(ceil(N / concurrency), 2) x S (the same as the ideal once "
    "N >= 2 x concurrency)."
)
KEYS = [
    "wall_s",
    "first_trial_s",
    "after_startup_s",
    "span_s",
    "ratio_after_startup",
    "ratio_span",
    "ratio_to_schedule_floor",
    "cpu_s",
    "user_s",
    "sys_s",
    "peak_rss_mb",
]
TASKS = 10


def sleep_case(
    name: str,
    work: str,
    reps: int,
    n: int,
    concurrencies: list[int],
    sleep_s: float = 1.0,
    inspect: bool = True,
) -> dict[str, Any]:
    """``n`` attempts of ``sleep_s`` at each concurrency; Inspect beside it when ``inspect``."""
    log(f"{name}: {n} trials of a {sleep_s:g} s agent at concurrency {concurrencies}")
    folder = WORK / work
    out: dict[str, Any] = {
        "case": name,
        "what": WHAT,
        "reps": reps,
        "trials": n,
        "sleep_s": sleep_s,
        "inspect": inspect,
        "concurrency": {},
    }
    for c in concurrencies:
        settings = {"sleep_s": sleep_s}
        write_experiment(
            folder / f"pb{c}", "bench-sleep", "bench-sleep", TASKS, n // (2 * TASKS), c, settings
        )
        tools: dict[str, Any] = {"pairbench": lambda c=c: pb_run(folder / f"pb{c}", True, "pb")}
        if inspect:
            params = {"n": n, "sleep_s": sleep_s}
            tools["inspect"] = lambda c=c, params=params: inspect_run(
                folder / f"inspect{c}", "sleep", params, c, True, "inspect"
            )
        raw = interleave(reps, tools)
        ideal = n * sleep_s / c
        floors = {
            "pairbench": max(math.ceil(n / c), 2) * sleep_s,
            "inspect": math.ceil(n / c) * sleep_s,
        }
        for tool, samples in raw.items():
            for s in samples:
                s["after_startup_s"] = s["wall_s"] - s["first_trial_s"]
                s["ratio_after_startup"] = s["after_startup_s"] / ideal
                s["ratio_span"] = s["span_s"] / ideal
                s["ratio_to_schedule_floor"] = s["after_startup_s"] / floors[tool]
        out["concurrency"][str(c)] = {
            "ideal_s": ideal,
            "schedule_floor_s": floors,
            "samples": raw,
            "medians": {k: medians(v, KEYS) for k, v in raw.items()},
        }
    return out
