"""What the integrity work costs per trial: the no-op case, before and after, interleaved.

Runs case 2's no-op experiment (the in-process ``bench-noop`` agent) with pairbench at a
base commit (checked out into ``bench/.work/before`` as a git worktree) and with the working
tree, alternating which goes first in each round. Each round runs both trees at two sizes
(``--small`` and ``--trials`` attempts): the CPU per trial (user + sys of ``pairbench run``
and its reaped children, the report at the end included) of the big run, and the marginal
CPU per trial, (CPU(big) - CPU(small)) / (big - small), which leaves out what a run pays
once (start-up, the watchdog, the report). For each, the median paired difference (after -
before) and its 95% confidence interval (the distribution-free order-statistic interval for
a median, as in a sign test). Writes ``bench/results/integrity_overhead.json``.

Scratch runs go to ``/dev/shm`` unless ``--disk``: the changes measured add no fsync (the
chain rides on the journal's existing writes), and on this shared disk the kernel's fsync
time varies by more than the target between identical runs (bench/README.md, case 2).

    .venv/bin/python bench/integrity_overhead.py                 # 12 rounds against c6698a3
    .venv/bin/python bench/integrity_overhead.py --rounds 20 --base <commit> --disk

The target (issue 12): the upper bound of the interval at most 0.2 ms per trial.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))
from _common import PB_PY, REPO, machine_info, pb_env, run_child, write_result
from run import write_experiment

BEFORE = REPO / "bench" / ".work" / "before"


def _worktree(base: str) -> Path:
    if BEFORE.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(BEFORE)], cwd=REPO, check=False)
        shutil.rmtree(BEFORE, ignore_errors=True)
    subprocess.run(["git", "worktree", "add", "--detach", str(BEFORE), base], cwd=REPO, check=True)
    return BEFORE / "src"


def _one(src: Path, folder: Path, tag: str, trials: int) -> dict[str, Any]:
    runs = folder / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    env = pb_env()
    # The same installed dependencies; only pairbench's own source differs.
    env["PYTHONPATH"] = os.pathsep.join([str(src), env["PYTHONPATH"]])
    argv = [str(PB_PY), "-m", "pairbench", "run", "experiment.yaml", "--runs-dir", "runs"]
    res = run_child([*argv, "--run-seed", "1"], cwd=folder, env=env, log=folder / f"{tag}.log")
    shutil.rmtree(runs, ignore_errors=True)
    res["cpu_per_trial_ms"] = 1000 * res["cpu_s"] / trials
    return res


def _median_ci(diffs: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """The median of ``diffs`` and the distribution-free interval for it: order statistics
    k and n-k+1 where k is the largest with P(Binomial(n, 1/2) < k) <= (1-confidence)/2."""
    xs = sorted(diffs)
    n = len(xs)
    alpha = (1 - confidence) / 2
    k = 0
    while stats.binom.cdf(k, n, 0.5) <= alpha:
        k += 1
    # k: the first count whose lower tail exceeds alpha; the interval is x(k) .. x(n-k+1)
    # (1-based), e.g. x(2) .. x(9) for n = 10 (coverage 97.9%).
    low, high = xs[max(k - 1, 0)], xs[min(n - k, n - 1)]
    return statistics.median(xs), low, high


def _summary(diffs: list[float]) -> dict[str, Any]:
    median, low, high = _median_ci(diffs)
    return {
        "paired_diff_ms": diffs,
        "median_diff_ms": median,
        "ci95_ms": [low, high],
        "met": high <= 0.2,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="c6698a3", help="commit to compare against")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--trials", type=int, default=2000, help="attempts of the big run")
    parser.add_argument("--small", type=int, default=200, help="attempts of the small run")
    parser.add_argument("--disk", action="store_true", help="scratch on the repo's disk")
    parser.add_argument(
        "--base-src",
        type=Path,
        help="pairbench source to compare against, in place of a worktree of --base "
        "(tests/bench/ passes this tree's src: a check that the case runs, not a measurement)",
    )
    args = parser.parse_args()
    before_src = args.base_src or _worktree(args.base)
    scratch = (REPO / "bench" / ".work") if args.disk else Path("/dev/shm")
    folders = {}
    for n in (args.small, args.trials):
        folder = scratch / f"pb-integrity-{n}"
        shutil.rmtree(folder, ignore_errors=True)
        write_experiment(folder, "bench-integrity", "bench-noop", 10, n // 20, 10)
        folders[n] = folder
    samples: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    sources = {"before": before_src, "after": REPO / "src"}
    for r in range(args.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        for tag in order:
            small = _one(sources[tag], folders[args.small], tag, args.small)
            big = _one(sources[tag], folders[args.trials], tag, args.trials)
            marginal = 1000 * (big["cpu_s"] - small["cpu_s"]) / (args.trials - args.small)
            samples[tag].append({"big": big, "small": small, "marginal_ms": marginal})
        print(
            f"round {r + 1}: "
            + ", ".join(
                f"{t} {samples[t][-1]['big']['cpu_per_trial_ms']:.3f} ms "
                f"(marginal {samples[t][-1]['marginal_ms']:.3f})"
                for t in order
            ),
            flush=True,
        )
    pairs = list(zip(samples["after"], samples["before"], strict=True))
    total = _summary(
        [a["big"]["cpu_per_trial_ms"] - b["big"]["cpu_per_trial_ms"] for a, b in pairs]
    )
    marginal = _summary([a["marginal_ms"] - b["marginal_ms"] for a, b in pairs])
    result = {
        "case": "integrity_overhead",
        "base": args.base,
        "rounds": args.rounds,
        "trials": args.trials,
        "small": args.small,
        "scratch": str(scratch),
        "target_upper_ms": 0.2,
        "cpu_per_trial": total,
        "marginal_cpu_per_trial": marginal,
        "samples": samples,
        **machine_info(),
    }
    path = write_result("integrity_overhead", result, "toy" if args.base_src else False)
    for label, res in (("CPU per trial", total), ("marginal CPU per trial", marginal)):
        low, high = res["ci95_ms"]
        print(
            f"{label}: median paired difference {res['median_diff_ms']:.3f} ms, 95% CI "
            f"[{low:.3f}, {high:.3f}] (target: upper <= 0.2 ms): "
            f"{'met' if res['met'] else 'NOT met'}"
        )
    print(path)
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)
    if args.base_src is None:
        subprocess.run(["git", "worktree", "remove", "--force", str(BEFORE)], cwd=REPO, check=False)


if __name__ == "__main__":
    main()
