"""The deterministic numbers of a demo's ``summary.json``, to show a refactor changed none.

Issue 31 moved the studies' report code without changing behaviour: the built-in demos
under fixed seeds must give the same numbers before and after. Timings, run ids and paths
differ from run to run, so this keeps only what the seeds decide (outcomes, k/n, paired
counts, exact p values, the study's own verdicts), reading the study's part from
``study.data`` (``pairbench.summary/3``) or the old ``revision``/``attribution`` keys
(``pairbench.summary/2``).

    python tests/helpers/demo_numbers.py compare OLD_RUNS NEW_RUNS   # <study>/<run>/summary.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _study_part(s: dict[str, Any]) -> dict[str, Any] | None:
    slot = s.get("study")
    if isinstance(slot, dict):
        return slot.get("data")
    return s.get("revision") or s.get("attribution")


def numbers(s: dict[str, Any]) -> dict[str, Any]:
    """The numbers of one summary that its run's seeds decide."""
    out: dict[str, Any] = {
        "arms": [
            (a["arm"], a["outcomes"], a["success"]["k"], a["success"]["n"]) for a in s["arms"]
        ],
        "pairs": [
            (
                p["a"],
                p["b"],
                p["both"],
                p["a_only"],
                p["b_only"],
                p["neither"],
                p["mcnemar_exact_p"],
            )
            for p in s["pairs"]
        ],
        "tasks": [
            (t["task"], {a: (v["k"], v["n"]) for a, v in t["arms"].items()}) for t in s["tasks"]
        ],
        "hypotheses": [(h["id"], h["pairs"], h["n"], h["dropped"]) for h in s["hypotheses"]],
    }
    part = _study_part(s)
    if part and "campaign_test" in part:
        keep = ("pair", "arm", "position", "tasks", "passed", "scored_failure",
                "pre_inference_rejection", "infra", "missing")  # fmt: skip
        out["campaigns"] = [{k: c[k] for k in keep} for c in part["campaigns"]]
        out["campaign_differences"] = part["campaign_test"]["differences"]
        out["grid"] = part["grid"]
    if part and "calibration" in part:
        out["calibration"] = part["calibration"]
        out["scorecards"] = {
            arm: {k: v for k, v in card.items() if k not in {"latency", "cost", "engine"}}
            for arm, card in (part.get("scorecards") or {}).items()
        }
    return out


RECORDED = Path(__file__).parents[1] / "data" / "demo_numbers"
"""Each demo's numbers at 2689c37, before issue 31 moved the studies' code (``<demo>.json``:
the run seed and the numbers)."""


def assert_same_numbers(demo: str, run_dir: Path) -> None:
    """The run's numbers are the ones ``demo`` gave before the move, under the same seed."""
    recorded = json.loads((RECORDED / f"{demo}.json").read_text(encoding="utf-8"))
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    seed = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["run_seed"]
    assert seed == recorded["run_seed"], "run the demo with the recorded seed"
    found = _counted(json.loads(json.dumps(numbers(summary))))
    expected = _counted(recorded["numbers"])
    assert found["arms"] and found == expected, _differences(expected, found)


def _differences(expected: dict[str, Any], found: dict[str, Any]) -> str:
    """Where the numbers differ, key by key (the first differing item of a list)."""
    lines = []
    for key in sorted(expected.keys() | found.keys()):
        was, now = expected.get(key), found.get(key)
        if was == now:
            continue
        if isinstance(was, list) and isinstance(now, list):
            at = next(
                (i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b),
                min(len(was), len(now)),
            )
            was, now = was[at : at + 1], now[at : at + 1]
            key = f"{key}[{at}]"
        lines.append(f"{key}: recorded {json.dumps(was)[:600]}, now {json.dumps(now)[:600]}")
    return "; ".join(lines)


def _counted(numbers: dict[str, Any]) -> dict[str, Any]:
    """``numbers`` with each arm's outcome kinds that no attempt had left out: an outcome kind
    added since the recording (issue 38's limits) is counted as 0 and changes no number."""
    arms = [[arm, {k: v for k, v in outcomes.items() if v}, *rest]
            for arm, outcomes, *rest in numbers["arms"]]  # fmt: skip
    return numbers | {"arms": arms}


def _summaries(root: Path) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(root.glob("*/*/summary.json"), key=lambda p: p.parent.name):
        found.setdefault(path.parent.parent.name, []).append(json.loads(path.read_text()))
    return found


def compare(old: Path, new: Path) -> int:
    before, after = _summaries(old), _summaries(new)
    same = True
    for study in sorted(set(before) | set(after)):
        a = [numbers(s) for s in before.get(study, [])]
        b = [numbers(s) for s in after.get(study, [])]
        equal = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
        same &= equal and bool(a)
        print(
            f"{study}: {len(a)} run(s) before, {len(b)} after: {'same' if equal else 'DIFFERENT'}"
        )
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "compare":
        sys.exit(__doc__)
    sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
