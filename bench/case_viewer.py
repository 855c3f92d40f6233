"""Case 8: ``pairbench view`` on a 100,000-trial run, measured in headless Chromium.

Run with pairbench's venv; prints one JSON object on stdout::

    .venv/bin/python bench/case_viewer.py --tasks 500 --trials 100 --work bench/.work/case8

1. Writes (untimed) a run folder of ``2 x tasks x trials`` attempts the way the store keeps
   an ended run: run.json with the full schedule, a journal that starts and ends the run,
   the trial table ``trials.npz`` (built as ``bench/case_analysis.py`` builds case 5's,
   then re-marked with the ended journal), and for every attempt its result file and its
   transcript. One attempt (``a/t0/0``) has a long transcript (``--long-events`` events,
   tens of MB) and one a single line of several MB, which must come back a part at a time.
2. Starts the real ``pairbench view RUNS --port 0`` (a child process), reads its URL.
3. In Debian's Chromium (Playwright), times: the run page until its counts and first page
   of trials are visible (cold: the server has not read the run yet; then warm), the
   trial browser, paging to the next and to the last page, a filter by outcome and text,
   a trial's page with the long transcript, and its "show more". Each figure is wall time
   from the click or ``goto`` to the selector being visible. Also: rows and bytes of every
   page (nothing loads all trials), and the server's peak RSS (VmHWM) at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from case_analysis import SEED, write_run  # noqa: E402  (bench/ is not a package)

RUN_ID = "bench-analysis-20261129T000000Z-000000"
"""The run id ``case_analysis.write_run`` gives its run."""
GOAL_S = 1.0


def _transcript(text: str) -> bytes:
    events = [
        {"t": 0.001, "kind": "agent_start", "agent": "bench"},
        {"t": 0.1, "kind": "message", "text": text},
        {"t": 0.2, "kind": "tool_call", "id": "c1", "tool": "get", "arguments": {"q": text}},
        {"t": 0.3, "kind": "tool_result", "id": "c1", "tool": "get", "text": text,
         "client_ms": 80.0},
        {"t": 0.4, "kind": "final", "text": "PASS"},
    ]  # fmt: skip
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def write_view_run(runs: Path, tasks: int, trials: int, long_events: int) -> dict[str, Any]:
    """The run folder (see the module's docstring) under ``runs``; returns what it holds."""
    from pairbench.store import Journal, RunDir, write_atomic
    from pairbench.store._events import RunEnded
    from pairbench.store._load_table import _journal_mark
    from pairbench.store._table import TrialTable

    t0 = time.perf_counter()
    root = runs / RUN_ID
    written = write_run(str(root), tasks, trials, SEED)
    journal = Journal(root / "journal.jsonl")
    journal.append(RunEnded(status="complete"))
    journal.close()
    with np.load(root / "trials.npz", allow_pickle=False) as data:
        table, _ = TrialTable.from_npz(data)
    write_atomic(root / "trials.npz", table.to_bytes(_journal_mark(RunDir(root))))
    cats, cols = table.categories, table.columns
    template = {
        "run_id": RUN_ID, "experiment": "bench-analysis", "labels": {}, "seed": 0,
        "model_seed": 0, "attempt": 1, "start_order": 0, "agent": "bench",
        "started_at": "2026-11-29T00:00:00+00:00", "ended_at": "2026-11-29T00:00:01+00:00",
    }  # fmt: skip
    transcript = _transcript("the agent's reply, with <b>markup</b> that must stay text")
    made: set[Path] = set()
    for i in range(len(table)):
        arm, task = cats["arm"][cols["arm"][i]], cats["task"][cols["task"][i]]
        trial = int(cols["trial"][i])
        folder = root / "results" / arm / task
        if folder not in made:
            folder.mkdir(parents=True)
            (root / "transcripts" / arm / task).mkdir(parents=True)
            made.add(folder)
        outcome = cats["outcome"][cols["outcome"][i]]
        record = template | {
            "arm": arm, "task": task, "trial": trial, "outcome": outcome,
            "reason": cats["reason"][cols["reason"][i]], "start_order": int(cols["start_order"][i]),
        }  # fmt: skip
        (folder / f"{trial}.json").write_text(json.dumps(record), encoding="utf-8")
        (root / "transcripts" / arm / task / f"{trial}.jsonl").write_bytes(transcript)
    long = root / "transcripts" / "a" / "t0" / "0.jsonl"
    with long.open("wb") as handle:
        handle.write(json.dumps({"t": 0.0, "kind": "message", "text": "x" * 4_000_000}).encode())
        handle.write(b"\n")
        for n in range(long_events):
            event = {"t": n / 1000, "kind": "message", "text": f"event {n} " + "y" * 180}
            handle.write(json.dumps(event).encode() + b"\n")
    return written | {
        "run": str(root),
        "write_s_untimed": time.perf_counter() - t0,
        "long_transcript_mb": long.stat().st_size / 1e6,
        "long_transcript_events": long_events + 1,
    }


def _vm(pid: int, field: str) -> float | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(found[1]) / 1024 if found else None


def start_view(runs: Path) -> tuple[subprocess.Popen[str], str]:
    """``pairbench view RUNS --port 0`` as a child; its URL once it prints it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairbench", "view", str(runs), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "LANG")},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    if not found:
        proc.kill()
        raise RuntimeError(f"pairbench view did not print its URL: {line!r}")
    return proc, found[1]


def measure(url: str, long_events: int) -> dict[str, Any]:
    """Every timed step in Chromium (see the module's docstring)."""
    from playwright.sync_api import sync_playwright

    from pairbench.fixtures._webmcp import CHROMIUM_ARGS, chromium_executable

    base = f"{url}/runs/{RUN_ID}"
    out: dict[str, Any] = {}
    pages: dict[str, dict[str, int]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=list(CHROMIUM_ARGS)
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})

        def timed(name: str, go: Any, selector: str) -> None:
            t0 = time.perf_counter()
            go()
            page.wait_for_selector(selector, state="visible")
            out[name] = time.perf_counter() - t0
            html = page.content()
            pages[name] = {
                "trial_rows": page.locator("table.trials tbody tr").count(),
                "events": page.locator("ol.timeline li.event").count(),
                "html_bytes": len(html.encode()),
            }

        # Chromium's first navigation starts its renderer: not the view's time.
        page.goto(f"{url}/static/favicon.svg")
        ready = "table.counts >> nth=0"
        first = "#first-trials"
        timed("first_useful_page_cold_s", lambda: page.goto(base, wait_until="commit"), first)
        page.wait_for_selector(ready, state="visible")
        timed("first_useful_page_warm_s", lambda: page.goto(base, wait_until="commit"), first)
        timed("trial_browser_s", lambda: page.goto(f"{base}/trials", wait_until="commit"),
              "#matched")  # fmt: skip
        timed("next_page_s", lambda: page.click("nav.pages >> text=next"), "text=page 2 of")
        timed("last_page_s", lambda: page.click("nav.pages >> text=last"), "#matched")
        timed(
            "filter_outcome_and_text_s",
            lambda: page.goto(f"{base}/trials?outcome=failed&q=wrong", wait_until="commit"),
            "#matched",
        )
        out["filter_matched"] = page.inner_text("#matched")
        timed(
            "filter_no_match_s",
            lambda: page.goto(f"{base}/trials?q=no-such-text-anywhere", wait_until="commit"),
            "p.empty",
        )
        timed(
            "trial_transcript_s",
            lambda: page.goto(f"{base}/trials/a/t0/0", wait_until="commit"),
            "ol.timeline li.more",
        )
        shown = page.locator("ol.timeline li.event").count()
        t0 = time.perf_counter()
        page.click("a[data-more]")
        page.locator("ol.timeline li.event").nth(shown).wait_for(state="attached")
        out["transcript_show_more_s"] = time.perf_counter() - t0
        out["transcript_events_after_more"] = page.locator("ol.timeline li.event").count()
        out["transcript_events_total"] = long_events + 1
        browser.close()
    out["pages"] = pages
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True, help="a scratch folder (made, then left)")
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--long-events", type=int, default=200_000)
    a = ap.parse_args()
    runs = Path(a.work) / "runs"
    runs.mkdir(parents=True, exist_ok=False)
    written = write_view_run(runs, a.tasks, a.trials, a.long_events)
    proc, url = start_view(runs)
    try:
        timings = measure(url, a.long_events)
        peak = _vm(proc.pid, "VmHWM")
        rss = _vm(proc.pid, "VmRSS")
    finally:
        proc.terminate()
        proc.wait(30)
    slowest = max(v for k, v in timings.items() if k.endswith("_s"))
    result = {
        "run_written": written,
        "timings_s": {k: v for k, v in timings.items() if k.endswith("_s")},
        "checks": {k: v for k, v in timings.items() if not k.endswith("_s")},
        "server_peak_rss_mb": peak,
        "server_rss_at_end_mb": rss,
        "goal_s": GOAL_S,
        "every_step_under_goal": slowest <= GOAL_S,
    }
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
