"""A small simulated experiment, run for real and reported: sections, statistics, the label."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import pairbench
from helpers.common import events_of
from helpers.report_checks import check_renders_offline_without_wrapping
from pairbench.report.summary._build import build_summary, summarize
from pairbench.store import load_table
from pairbench.store._events import AttemptFinished, TrialRow

EXPERIMENT: dict[str, Any] = {
    "id": "simulated-report",
    "version": "1.0.0",
    "description": "A planted effect, a third arm that is not declared, some timeouts.",
    "trials": 4,
    "order": "alternate",
    # A short timeout keeps the test fast: a too-slow draw sleeps until the runner cancels it.
    "budget": {"trial_timeout_s": 0.25, "concurrency": 4},
    "comparisons": [["baseline", "candidate"]],
    "agent": {
        "adapter": "simulated",
        "settings": {
            "success": {"baseline": 0.4, "candidate": 0.85, "other": 0.6},
            "correlation": 0.6,
            "latency_ms": {
                "baseline": {"median": 200, "sigma": 0.3},
                "candidate": {"median": 60, "sigma": 0.3},
                "other": {"median": 80, "sigma": 0.3},
            },
            "tokens": {
                arm: {
                    "input": 2000,
                    "output": 300,
                    "sigma": 0.3,
                    "cost_per_1k": {"input": 0.003, "output": 0.015},
                }
                for arm in ("baseline", "candidate", "other")
            },
            "realtime": False,
        },
    },
    "arms": {"baseline": {}, "candidate": {}, "other": {}},
    "tasks": [
        {
            "id": f"task-{i}",
            "prompt": "prompts/task.md",
            "grader": {"name": "exact-answer", "args": {"expect": "PASS"}},
        }
        for i in range(3)
    ],
}
SECTIONS = (
    "Outcomes by arm",
    "Arm pairs: success",
    "Arm pairs: latency, tokens, cost (all assigned trials)",
    "Arm pairs: latency, tokens, cost (conditional: pairs both arms passed)",
    "With and without replaced attempts",
    "Trials not run, infra, interrupted, agent errors",
)


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, str]:
    root = tmp_path_factory.mktemp("simulated")
    (root / "prompts").mkdir()
    (root / "prompts" / "task.md").write_text("Simulated task ${seed}.\n", encoding="utf-8")
    path = root / "experiment.yaml"
    with path.open("w", encoding="utf-8") as handle:
        YAML().dump(EXPERIMENT, handle)
    outcome = pairbench.start_run(path, root / "runs", run_seed=5)
    assert outcome.complete
    paths = pairbench.write_report(Path(outcome.run_dir))
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    md = paths.markdown.read_text(encoding="utf-8")
    page = paths.html.read_text(encoding="utf-8")
    return summary, md, page


def test_simulated_label_is_prominent(reported: tuple[dict[str, Any], str, str]) -> None:
    summary, md, page = reported
    assert summary["run"]["simulated"] is True
    head = md.split("## ")[0]  # before the first section
    assert "SIMULATED run" in head and md.splitlines()[0].endswith("(SIMULATED)")
    assert '<p class="simulated">SIMULATED run' in page and "(SIMULATED)</title>" in page


def test_sections_are_shown(reported: tuple[dict[str, Any], str, str]) -> None:
    _, md, page = reported
    for title in SECTIONS:
        assert f"## {title}" in md
        assert f"<h2>{title}</h2>" in page
    assert md.count("No replaced attempts") == 1


def test_summary_pair_keys_and_declared_only_p(reported: tuple[dict[str, Any], str, str]) -> None:
    summary, md, page = reported
    pairs = {(p["a"], p["b"]): p for p in summary["pairs"]}
    assert list(pairs) == [("baseline", "candidate"), ("baseline", "other"), ("candidate", "other")]
    for p in pairs.values():
        for key in ("pairs", "both", "a_only", "b_only", "neither", "correlation"):
            assert key in p
        assert p["pairs"] == 12
        assert p["both"] + p["a_only"] + p["b_only"] + p["neither"] == 12
        assert len(p["difference"]["ci95"]) == 2 and "Newcombe" in p["difference"]["method"]
        assert p["difference"]["task_clustered"]["tasks"] == 3  # 4 trials per task
        for m in p["metrics"].values():
            assert {"median_a", "median_b", "median_paired_difference"} <= set(m)
            assert {"ci95", "censored"} <= set(m["median_paired_difference"])
        assert p["conditional"]["conditional"] == "pairs both arms passed"
    declared = pairs[("baseline", "candidate")]
    assert 0.0 <= declared["mcnemar_exact_p"] <= 1.0
    assert declared["mcnemar_holm_p"] == declared["mcnemar_exact_p"]
    for pair in (("baseline", "other"), ("candidate", "other")):
        assert pairs[pair]["mcnemar_exact_p"] is None and pairs[pair]["mcnemar_holm_p"] is None
    for text in (md, page):
        # The declared comparison's exact p and, beside it, its mid-p.
        assert len(re.findall(r"p (?:=|<|&lt;) 0\.\d+", text)) == 2


def test_metrics_measured_censored_and_estimated(reported: tuple[dict[str, Any], str, str]) -> None:
    summary, md, _ = reported
    p = next(x for x in summary["pairs"] if (x["a"], x["b"]) == ("baseline", "candidate"))
    agent = p["metrics"]["agent_ms"]
    timeouts = sum(a["outcomes"]["timeout"] for a in summary["arms"])
    assert agent["n_used"] + agent["n_missing"] == 12
    if timeouts:  # durations of timed-out trials are censored at the 250 ms limit
        censored = agent["median_a"]["n_censored"] + agent["median_b"]["n_censored"]
        assert censored > 0 and "timed out in" in md
    tokens = p["metrics"]["input_tokens"]
    assert tokens["n_used"] > 0 and tokens["median_a"]["estimate"] is not None
    cost = p["metrics"]["cost_usd"]  # the simulated agent only estimates cost: kept apart
    assert cost["n_used"] == 0 and cost["n_estimated"] > 0
    assert "only estimated, kept apart" in md


def test_the_report_reads_the_journal_rows_the_runner_wrote(tmp_path: Path) -> None:
    # The runner writes each record's row into its journal line; the report's trial table
    # is built from those rows and must give the numbers the result files give.
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "task.md").write_text("Simulated task ${seed}.\n", encoding="utf-8")
    path = tmp_path / "experiment.yaml"
    with path.open("w", encoding="utf-8") as handle:
        YAML().dump(EXPERIMENT, handle)
    outcome = pairbench.start_run(path, tmp_path / "runs", run_seed=9)
    run_dir = Path(outcome.run_dir)
    finished = events_of(pairbench.RunDir(run_dir).journal_events(), AttemptFinished)
    assert finished and all(isinstance(e.row, TrialRow) for e in finished)
    loaded = load_table(run_dir)
    assert loaded.source == "journal" and (run_dir / "trials.npz").is_file()
    files = pairbench.load_run(run_dir)
    expected = build_summary(files.info, files.results, [*files.infra, *files.interrupted])
    assert summarize(loaded.info, loaded.table) == expected
    assert load_table(run_dir).source == "trials.npz"


def test_usage_total_turns_and_arm_identities(reported: tuple[dict[str, Any], str, str]) -> None:
    # The simulated agent draws a total input and output (no cache split): the total is
    # their sum, the split is missing with its reason, and each arm's identity is shown.
    summary, md, page = reported
    for entry in summary["cost"]:
        total, inp, out = (
            entry[k]["measured"] for k in ("total_tokens", "input_tokens", "output_tokens")
        )
        assert total["n"] == inp["n"] == out["n"] > 0
        assert total["total"] == inp["total"] + out["total"]
        assert entry["turns"]["measured"]["median"] == 1.0
        split = entry["cache_read_input_tokens"]
        assert split["measured"]["n"] == 0
        reasons = split["missing"]["reasons"]  # a timed-out trial has no agent output
        assert set(reasons) <= {"no cache split simulated", "the agent did not run"}
        assert reasons["no cache split simulated"] > 0
    idents = summary["run"]["arm_identities"]
    assert [x["arm"] for x in idents] == ["baseline", "candidate", "other"]
    for x in idents:  # tool_discovery as run.json's identities record it for the adapter
        assert x["agent"] == "simulated" and x["tool_discovery"]
        assert f"| {x['arm']} | simulated | not recorded | {x['tool_discovery']} | " in md
        assert x["models_seen"] == []
    assert "<h2>Arms</h2>" in page and "<h2>Usage and turns by arm</h2>" in page
    assert "| baseline vs candidate | Turns |" in md


@pytest.mark.whole_run
def test_tables_of_tokens_cost_and_censoring_fit_a_1400px_page(
    reported: tuple[dict[str, Any], str, str], tmp_path: Path
) -> None:
    # The built-in demos' scripted agents report no tokens and rarely time out; this run
    # has both, so its Cost and censored-difference tables are the widest any report gets.
    _, md, page = reported
    assert "| Differences at least as recorded |" in md and "timed out in" in md
    assert "measured total" in md and "[1] simulated agent (seeded)." in md
    (tmp_path / "report.html").write_text(page, encoding="utf-8")
    check_renders_offline_without_wrapping(tmp_path, tmp_path / "report.png")
