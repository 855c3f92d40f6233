"""The attribution-reliability study's whole held-out run with the heuristic reference engine,
offline: its wall time, and whether every confusion-matrix column is filled.

    .venv/bin/python bench/attribution_heldout.py   # bench/results/attribution_heldout.json
    .venv/bin/python bench/attribution_heldout.py --toy   # one session, no stagger (tests)

It copies the study, freezes it (a held-out run needs a lock that verifies), runs
``--case-set held-out`` (60 end-to-end sessions and 20 packages, two workers, the second
starting 10 s after the first), writes the report and records the scorer's numbers.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import log, machine_info, write_result

COLUMNS = ("blamed_supported", "blamed_unsupported_only", "set_aside", "nothing")


def _toy(exp: Path) -> None:
    """Cut the copy down to its first held-out session, no stagger: a check that the case
    runs against today's APIs (tests/bench/), not a measurement."""
    from ruamel.yaml import YAML

    yaml = YAML()
    data = yaml.load(exp.read_text(encoding="utf-8"))
    held_out = [t for t in data["tasks"] if t.get("case_set") == "held-out"]
    data["tasks"] = [{**held_out[0], "trials": 1}]
    data["budget"]["start_stagger_s"] = 0
    data.pop("hypotheses", None)
    with exp.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)


def main() -> int:
    from pairbench import start_run, write_report
    from pairbench.freeze import write_lock
    from pairbench.spec import load_experiment
    from pairbench.studies.attribution_reliability import STUDY

    with tempfile.TemporaryDirectory(prefix="pb-ar-") as tmp:
        root = Path(tmp) / "study"
        shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
        exp = root / "experiment.yaml"
        toy = "--toy" in sys.argv[1:]
        if toy:
            _toy(exp)
        write_lock(load_experiment(exp), servers=False)
        log("held-out run: heuristic engine, 80 sessions")
        started = time.monotonic()
        outcome = start_run(exp, Path(tmp) / "runs", run_seed=1, case_set="held-out")
        wall = time.monotonic() - started
        write_report(outcome.run_dir)
        cards = json.loads((outcome.run_dir / "results.json").read_text(encoding="utf-8"))
    card = cards["heuristic"]
    truth_rows = [r for r in card["confusion"] if r["by"] == "truth"]
    filled = {c: sum(r["cells"][c]["count"] for r in truth_rows) for c in COLUMNS}
    metrics = {name: {"k": m["k"], "n": m["n"]} for name, m in card["metrics"].items()}
    data = {
        "status": outcome.status,
        "wall_s": round(wall, 1),
        "target_s": 600,
        "columns": filled,
        "every_column_filled": all(filled.values()),
        "metrics": metrics,
        "misses": len(card["misses"]),
        "machine": machine_info(),
    }
    path = write_result("attribution_heldout", data, "toy" if toy else False)
    log(f"{outcome.status} in {wall:.0f} s; columns {filled}; wrote {path}")
    # One session cannot fill every column: a toy run only has to complete.
    return 0 if outcome.status == "complete" and (toy or data["every_column_filled"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
