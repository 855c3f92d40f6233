"""Real runs for the export tests: the simulated agent, so a run takes a fraction of a second.

``EXPERIMENT`` has a planted latency effect and three declared hypotheses (one met, one
not, one not computable), and its candidate arm has no success probability for
``task-2``: the simulated agent raises an infra failure there, the trial is retried once
and the run stops, so its records hold final results, kept infra attempts and ``not_run``
trials. Every number is drawn from the run seed, so the run is the same every time.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

import pairbench

TOKENS = {
    "input": 2000,
    "output": 300,
    "sigma": 0.3,
    "cost_per_1k": {"input": 0.003, "output": 0.015},
}
EXPERIMENT: dict[str, Any] = {
    "id": "export-sim",
    "version": "1.0.0",
    "trials": 3,
    "order": "alternate",
    # One attempt at a time: the run stops at the same attempt every time.
    "budget": {"trial_timeout_s": 5, "concurrency": 1},
    "comparisons": [["baseline", "candidate"]],
    "agent": {
        "adapter": "simulated",
        "settings": {
            "success": {"baseline": 0.4, "candidate": {"task-0": 0.85, "task-1": 0.85}},
            "correlation": 0.6,
            "latency_ms": {
                "baseline": {"median": 200, "sigma": 0.3},
                "candidate": {"median": 60, "sigma": 0.3},
            },
            "tokens": {"baseline": TOKENS, "candidate": TOKENS},
        },
    },
    "arms": {"baseline": {}, "candidate": {}},
    "hypotheses": [
        {
            "id": "h1-latency",
            "text": "The candidate's latency differs.",
            "kind": "difference",
            "metric": "agent_ms",
            "arms": ["candidate", "baseline"],
        },
        {
            "id": "h2-tokens",
            "text": "Tokens are the same within 1%.",
            "kind": "equivalence",
            "metric": "total_tokens",
            "arms": ["candidate", "baseline"],
            "margin": "1%",
        },
        {
            "id": "h3-tier-2",
            "text": "Tier 2 latency differs.",
            "kind": "difference",
            "metric": "agent_ms",
            "arms": ["candidate", "baseline"],
            "where": {"tier": 2},
        },
    ],
    "tasks": [
        {
            "id": f"task-{i}",
            "labels": {"tier": 1 + i // 2},
            "prompt": "prompts/task.md",
            "grader": {"name": "exact-answer", "args": {"expect": "PASS"}},
        }
        for i in range(3)
    ],
}


def simulated_run(root: Path, *, hypotheses: bool = True, report: bool = True) -> Path:
    """Run ``EXPERIMENT`` under ``root`` (without its hypotheses if asked); its run folder.

    ``report`` writes summary.json (few bootstrap resamples: the tests read only verdicts).
    """
    data = copy.deepcopy(EXPERIMENT)
    if not hypotheses:
        del data["hypotheses"]
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "task.md").write_text("Simulated task ${seed}.\n", encoding="utf-8")
    path = root / "experiment.yaml"
    with path.open("w", encoding="utf-8") as handle:
        YAML().dump(data, handle)
    outcome = pairbench.start_run(path, root / "runs", run_seed=5)
    assert outcome.status.startswith("stopped: trial candidate/task-2/"), outcome.status
    if report:
        pairbench.write_report(Path(outcome.run_dir), bootstrap_reps=50)
    return Path(outcome.run_dir)
