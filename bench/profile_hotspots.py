"""Profile the cases whose targets were missed; list hot spots with file:line.

    .venv/bin/python bench/profile_hotspots.py 1 2 5     # case numbers (run.py passes misses)
    .venv/bin/python bench/profile_hotspots.py --toy 1 2 3 5   # after `run.py --toy` (tests)

Uses pyinstrument (``pip install pyinstrument`` into .venv; installed on first use) and,
for start-up, ``python -X importtime``. Each profile runs in a fresh process, in-process
pairbench (``runpy`` of ``pairbench.__main__`` with ``bench/plugin`` on ``sys.path``).
Writes ``bench/results/profile_<case>.txt`` (pyinstrument's tree) and
``bench/results/profiles.json`` (top functions by self time and pairbench functions by
inclusive time, each as ``file:line function``).
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

from _common import BENCH, PB_PY, PLUGIN, REPO, RESULTS, WORK, log, pb_env

TOP = 15


def _ensure_pyinstrument() -> None:
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        log("installing pyinstrument into the pairbench venv (profiling only)")
        subprocess.run([str(PB_PY), "-m", "pip", "install", "--quiet", "pyinstrument"], check=True)


def _short(path: str | None) -> str:
    if not path:
        return "?"
    for marker in ("/site-packages/", "/src/", "/lib/python3.11/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path.replace(str(REPO) + "/", "")


def hotspots(root: Any) -> dict[str, Any]:
    """Self time per function, and inclusive time per pairbench function (no double count)."""
    self_t: dict[str, float] = defaultdict(float)
    incl: dict[str, float] = defaultdict(float)

    def walk(f: Any, stack: frozenset[str]) -> None:
        real = [c for c in f.children if c.file_path is not None]
        key = f"{_short(f.file_path)}:{f.line_no} {f.function}"
        self_t[key] += f.time - sum(c.time for c in real)
        if (
            f.file_path
            and "/pairbench/" in f.file_path
            and "/bench/" not in f.file_path
            and key not in stack
        ):
            incl[key] += f.time
        for c in real:
            walk(c, stack | {key})

    walk(root, frozenset())
    total = root.time
    return {
        "total_s": total,
        "top_self": [
            {"where": k, "s": round(v, 4), "share": round(v / total, 3)}
            for k, v in sorted(self_t.items(), key=lambda kv: -kv[1])[:TOP]
        ],
        "top_pairbench_inclusive": [
            {"where": k, "s": round(v, 4), "share": round(v / total, 3)}
            for k, v in sorted(incl.items(), key=lambda kv: -kv[1])[:TOP]
        ],
    }


def _profile(fn: Any, name: str) -> dict[str, Any]:
    from pyinstrument import Profiler

    prof = Profiler(interval=0.0005, async_mode="disabled")
    prof.start()
    t0 = time.process_time()
    with contextlib.suppress(SystemExit):
        fn()
    cpu = time.process_time() - t0
    prof.stop()
    (RESULTS / f"profile_{name}.txt").write_text(
        prof.output_text(unicode=True, color=False, show_all=False), encoding="utf-8"
    )
    out = hotspots(prof.last_session.root_frame())
    out["cpu_s"] = cpu
    return out


def _pairbench_cli(folder: Path) -> Any:
    def go() -> None:
        sys.path.insert(0, str(PLUGIN))
        os.chdir(folder)
        sys.argv = [
            "pairbench",
            "run",
            "experiment.yaml",
            "--runs-dir",
            "runs-profile",
            "--run-seed",
            "1",
        ]
        runpy.run_module("pairbench", run_name="__main__", alter_sys=True)

    return go


def one(case: str, toy: bool = False) -> dict[str, Any]:
    """Runs inside a fresh child process; ``toy``: the folders ``run.py --toy`` wrote."""
    if case == "1":
        return _profile(_pairbench_cli(WORK / "case1" / "pb"), "1_startup")
    if case == "2":
        n = 40 if toy else 1000
        return _profile(_pairbench_cli(WORK / "case2" / f"pb{n}"), f"2_harness_{n}")
    if case == "3":
        c = 10 if toy else 200
        return _profile(_pairbench_cli(WORK / "case3" / f"pb{c}"), f"3_sleep_c{c}")
    if case == "9":
        c = 20 if toy else 1000
        return _profile(_pairbench_cli(WORK / "case9" / f"pb{c}"), f"9_sleep_c{c}")
    if case == "5":
        sys.argv = ["case_analysis.py"]
        sys.path.insert(0, str(BENCH))
        import shutil

        import case_analysis as ca

        from pairbench.report import write_report

        tasks, trials = (5, 20) if toy else (ca.TASKS, ca.TRIALS)
        stats = _profile(lambda: ca.run_stats(5.0, 2000, tasks, trials), "5a_stats")
        res = {"stats": stats}
        run_dir = WORK / "case5" / "profiled-run"
        shutil.rmtree(run_dir, ignore_errors=True)
        ca.write_run(str(run_dir), tasks, trials, ca.SEED)
        res["report_1m"] = _profile(
            lambda: write_report(run_dir, bootstrap_reps=2000), "5b_report_1m"
        )
        shutil.rmtree(run_dir, ignore_errors=True)
        return res
    if case == "4":
        return _mcp(50 if toy else 3000)
    return {"skipped": f"no profile for case {case}"}


def _mcp(calls: int) -> dict[str, Any]:
    """Case 4: the same ``get_issue`` calls through ``McpSurface`` and through a bare SDK
    session, each side profiled on its own (after a warm-up), per transport. What the
    surface's profile has that the raw one lacks is what pairbench adds per call."""
    import asyncio
    import tempfile

    from pyinstrument import Profiler

    sys.path.insert(0, str(BENCH))
    import case_mcp as cm

    async def go() -> dict[str, Any]:
        out: dict[str, Any] = {}
        texts: list[str] = []
        with tempfile.TemporaryDirectory(prefix="pb-profile-mcp-") as d:
            root = Path(d)
            warm = await cm.warm_tracker(root)
            try:
                for transport in ("stdio", "http"):
                    async with cm.sides(transport, root / "fixtures", "p", warm.url) as pair:
                        for call in pair:
                            for _ in range(50):
                                await call()
                        for side, call in zip(("surface", "raw"), pair, strict=True):
                            prof = Profiler(interval=0.0001, async_mode="disabled")
                            prof.start()
                            t0, c0 = time.perf_counter(), time.process_time()
                            for _ in range(calls):
                                await call()
                            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                            prof.stop()
                            name = f"{transport}_{side}"
                            texts.append(
                                f"==== {name}: {calls} calls, {wall / calls * 1000:.3f} ms wall "
                                f"and {cpu / calls * 1000:.3f} ms CPU a call (this process)\n"
                                + prof.output_text(unicode=True, color=False, show_all=False)
                            )
                            res = hotspots(prof.last_session.root_frame())
                            res["ms_per_call"] = wall / calls * 1000
                            res["cpu_ms_per_call"] = cpu / calls * 1000
                            out[name] = res
            finally:
                await warm.aclose()
        (RESULTS / "profile_4_mcp.txt").write_text("\n".join(texts), encoding="utf-8")
        return out

    return asyncio.run(go())


def importtime(folder: Path) -> list[dict[str, Any]]:
    """``-X importtime`` of ``pairbench run`` (1 trial): top imports by cumulative time."""
    proc = subprocess.run(
        [
            str(PB_PY),
            "-X",
            "importtime",
            "-m",
            "pairbench",
            "run",
            "experiment.yaml",
            "--runs-dir",
            "runs-importtime",
            "--run-seed",
            "1",
        ],
        cwd=folder,
        env=pb_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line[len("import time:") :].split("|", 2)
        pkg = name.strip()
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        rows.append(
            {
                "module": pkg,
                "depth": depth,
                "self_ms": int(self_us.strip()) / 1000,
                "cumulative_ms": int(cum_us.strip()) / 1000,
            }
        )
    # Third-party packages (first import of each top-level name: its cumulative time is
    # what importing it cost) and pairbench's own subpackages one level down.
    third = [
        r
        for r in rows
        if r["module"].count(".") <= 1
        and r["depth"] >= 1
        and not r["module"].startswith("pairbench")
        and not r["module"].startswith("_")
    ]
    own = [r for r in rows if r["module"].startswith("pairbench.") and r["module"].count(".") == 1]
    total = next((r["cumulative_ms"] for r in rows if r["module"] == "pairbench"), None)
    return [
        {"module": "pairbench (all of it)", "cumulative_ms": total, "depth": 0},
        *sorted(third + own, key=lambda r: -r["cumulative_ms"])[:25],
    ]


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "--one":
        json.dump(one(sys.argv[2], "--toy" in sys.argv[3:]), sys.stdout)
        return
    toy = "--toy" in sys.argv[1:]
    _ensure_pyinstrument()
    RESULTS.mkdir(parents=True, exist_ok=True)
    out_path = RESULTS / "profiles.json"
    results: dict[str, Any] = json.loads(out_path.read_text()) if out_path.exists() else {}
    errors: list[str] = []
    for case in [a for a in sys.argv[1:] if a != "--toy"]:
        log(f"  profiling case {case}")
        proc = subprocess.run(
            [str(PB_PY), __file__, "--one", case, *(["--toy"] if toy else [])],
            env=pb_env(),
            capture_output=True,
            text=True,
            check=False,
            cwd=REPO,
        )
        if proc.returncode != 0:
            results[case] = {"error": proc.stderr[-2000:]}
            errors.append(case)
            continue
        results[case] = json.loads(proc.stdout.strip().splitlines()[-1])
        if case == "1":
            results[case]["importtime_top"] = importtime(WORK / "case1" / "pb")
    for folder in WORK.glob("case*/*/runs-*"):
        subprocess.run(["rm", "-rf", str(folder)], check=False)
    out_path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for case, data in results.items():
        print(f"\n== case {case}: hot spots (see bench/results/profile_{case}*.txt)")
        blocks = (
            [data]
            if "top_self" in data
            else [v for v in data.values() if isinstance(v, dict) and "top_self" in v]
        )
        for b in blocks:
            print(
                f"  profiled {b['total_s']:.2f} s wall, {b.get('cpu_s', 0):.2f} s CPU; self time:"
            )
            for h in b["top_self"][:10]:
                print(f"    {h['s']:7.3f} s {h['share']:6.1%}  {h['where']}")
            print("  pairbench functions, inclusive:")
            for h in b["top_pairbench_inclusive"][:10]:
                print(f"    {h['s']:7.3f} s {h['share']:6.1%}  {h['where']}")
        if "importtime_top" in data:
            print("  imports by cumulative time (-X importtime):")
            for r in data["importtime_top"][:12]:
                print(f"    {r['cumulative_ms']:8.1f} ms  {r['module']}")
    if errors:
        sys.exit(f"profiling failed for case(s) {', '.join(errors)}: see {out_path}")


if __name__ == "__main__":
    main()
