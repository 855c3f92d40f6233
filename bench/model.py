"""Case 7: the real path: the openai agent against the local llama-server and Gemma 3 270M.

    .venv/bin/python bench/model.py            # 2 tasks x 2 trials x 2 transports, c=1 and c=2
    .venv/bin/python bench/model.py --quick    # c=1 only
    .venv/bin/python bench/model.py --toy      # 1 task x 1 trial, the local chat double
                                               # in the model's place (tests/bench/)

Needs ``pairbench model install``. Runs mcp-transports' two tool arms with the constrained
tool calling the demo uses, once on a one-slot server at concurrency 1 and once on a
two-slot server at concurrency 2 (the server's slot count). Reports trials per minute,
and splits each trial's wall time into the model (the sum of its ``model_request``
latencies, pairbench's clock around each HTTP request) and the rest (the harness: MCP
connections, tool calls, grading, records), to set beside case 2's harness CPU per trial.
Writes ``bench/results/model.json`` (``quick/`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import WORK, log, machine_info, write_result

TASKS = ("read-issue-title", "count-open-label")
ARMS = ("local-stdio", "remote-http")


def _experiment(folder: Path, port: int, slots: int, toy: bool = False) -> Path:
    from pairbench.model import ServeConfig
    from pairbench.studies.mcp_transports import STUDY

    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(STUDY.root, folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / "experiment.yaml"
    yaml = YAML()
    data = yaml.load(path.read_text(encoding="utf-8"))
    data["trials"] = 1 if toy else 2
    data["tasks"] = [t for t in data["tasks"] if t["id"] in TASKS[: 1 if toy else None]]
    data["arms"] = {name: arm for name, arm in data["arms"].items() if name in ARMS}
    data["comparisons"] = [list(ARMS)]
    data.pop("hypotheses", None)  # they count tasks this cut-down copy leaves out
    data["budget"] = {"trial_timeout_s": 300, "concurrency": slots}
    data["agent"] = {
        "adapter": "openai",
        "settings": {
            "base_url": f"http://127.0.0.1:{port}/v1",
            "model": ServeConfig().alias,
            "tool_calling": "constrained",
            "temperature": 1.0,
            "cache_prompt": False,
            "max_turns": 4,
            "max_output_tokens": 128,
        },
    }
    for name in ("experiment.lock.json", "protocol_hash.txt"):
        (folder / name).unlink(missing_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)
    return path


@contextmanager
def _server(slots: int, toy: bool) -> Iterator[int]:
    """The real llama-server and model, or (toy) the local chat double shaped like it."""
    from pairbench.fixtures._serve_port import free_port
    from pairbench.model import LlamaServer, ServeConfig

    if toy:
        from pairbench.testing.chat_double import start_chat_double

        script = {"llama_cpp": True, "slots": slots, "model": ServeConfig().alias}
        with start_chat_double(script=script) as double:
            yield int(double.url.rsplit(":", 1)[1])
        return
    port = free_port()
    with LlamaServer.start(ServeConfig(slots=slots), port=port):
        yield port


def case(slots: int, toy: bool = False) -> dict[str, Any]:
    from pairbench import start_run

    folder = WORK / f"model-c{slots}"
    with _server(slots, toy) as port:
        exp = _experiment(folder, port, slots, toy)
        t0 = time.perf_counter()
        outcome = start_run(exp, folder / "runs", run_seed=1, concurrency=slots)
        wall_s = time.perf_counter() - t0
    trials, model_ms, trial_ms = 0, [], []
    for path in sorted((outcome.run_dir / "transcripts").rglob("*.jsonl")):
        events = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        requests = [e["latency_ms"] for e in events if e["kind"] == "model_request"]
        model_ms.append(sum(requests))
    for r in outcome.results:
        if r.metrics is not None and r.metrics.wall_ms.value is not None:
            trials += 1
            trial_ms.append(float(r.metrics.wall_ms.value))
    shutil.rmtree(folder, ignore_errors=True)
    model_total, trial_total = sum(model_ms), sum(trial_ms)
    return {
        "slots": slots,
        "concurrency": slots,
        "trials": trials,
        "outcomes": sorted(r.outcome for r in outcome.results),
        "wall_s": round(wall_s, 1),
        "trials_per_minute": round(trials / wall_s * 60, 2),
        "median_trial_s": round(statistics.median(trial_ms) / 1000, 2),
        "model_share_of_trial_time": round(model_total / trial_total, 3),
        "harness_ms_per_trial": round((trial_total - model_total) / max(trials, 1), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--toy", action="store_true", help="the chat double, 1 task x 1 trial")
    args = parser.parse_args()
    cases = {}
    for slots in (1,) if args.quick or args.toy else (1, 2):
        log(f"model: {len(TASKS)} tasks x 2 trials x {len(ARMS)} arms at concurrency {slots}")
        cases[f"c{slots}"] = case(slots, args.toy)
    data = {"machine": machine_info(), "cases": cases, "toy": args.toy}
    path = write_result("model", data, quick="toy" if args.toy else args.quick)
    print(json.dumps({k: v for k, v in data.items() if k != "machine"}, indent=2))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
