"""Token usage with its cache split, turns, and each arm's identity, in summary and reports.

The reference numbers are computed here with numpy and scipy from the records themselves,
not from an earlier pairbench output.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binom

from helpers.report_builders import XSS, make_result, make_run
from pairbench.report._write import render_texts, write_texts
from pairbench.report.render._html import render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.store import Metric, TrialResult, usage_metrics

ARMS = ["control", "treatment"]
TASKS = [f"task-{t}" for t in range(4)]
TRIALS = 3
USAGE = (
    "input_tokens",
    "uncached_input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
    "total_tokens",
)
COMPARED = (*USAGE, "turns")
IDENTITIES = {
    "control": {
        "agent": "claude-code",
        "model": "claude-sonnet-4-5",
        "tool_discovery": "false",
        "agent_version": "2.0.14 (Claude Code)",
    },
    "treatment": {
        "agent": "openai",
        "model": "gpt-5-mini",
        "tool_discovery": "not applicable (the adapter offers every tool directly)",
    },
}
MISSING = ("treatment", "task-2", 1)
"""The one trial whose agent reported no usage and no turns."""


def _results() -> list[TrialResult]:
    rng = np.random.default_rng(7)
    out = []
    for task in TASKS:
        for trial in range(TRIALS):
            for pos, arm in enumerate(ARMS):
                scale = 1.0 if arm == "control" else 0.6  # treatment reads less from cache
                read = int(rng.integers(2000, 9000) * scale)
                creation = int(rng.integers(0, 3000))
                uncached = int(rng.integers(3, 400))
                output = int(rng.integers(50, 900))
                turns = int(rng.integers(1, 12))
                usage = usage_metrics(
                    source="provider usage",
                    uncached=uncached,
                    cache_creation=creation,
                    cache_read=read,
                    output=output,
                )
                models = ("claude-sonnet-4-5",) if arm == "control" else ("gpt-5-mini", XSS)
                reported = Metric.measured(turns, "agent turns")
                if (arm, task, trial) == MISSING:
                    usage = usage_metrics(source="provider usage")
                    reported = Metric.missing("the agent did not report turns")
                outcome = "passed" if rng.random() < 0.7 else "failed"
                out.append(
                    make_result(
                        arm,
                        task,
                        trial,
                        outcome,
                        start_order=pos,
                        usage=usage,
                        turns=reported,
                        models=models,
                    )
                )
    return out


def _run() -> dict[str, Any]:
    return make_run(
        arms=list(ARMS),
        comparisons=[list(ARMS)],
        tasks=[{"id": t, "labels": {}} for t in TASKS],
        schedule=[],
        planned_trials=len(ARMS) * len(TASKS) * TRIALS,
        identities={"arms": IDENTITIES},
    )


def _value(r: TrialResult, name: str) -> float | None:
    assert r.metrics is not None
    metric: Metric = getattr(r.metrics, name)
    return metric.value if metric.provenance == "measured" else None


def _order_statistic_ci(diffs: list[float]) -> list[float]:
    """Largest r with 2 P(Binomial(n, 1/2) <= r - 1) <= 5%: the interval [d(r), d(n+1-r)]."""
    n, d = len(diffs), sorted(diffs)
    r = max(r for r in range(1, n // 2 + 1) if 2 * binom.cdf(r - 1, n, 0.5) <= 0.05)
    return [d[r - 1], d[n - r]]


@pytest.fixture(scope="module")
def reported() -> tuple[list[TrialResult], dict[str, Any], str, str]:
    results = _results()
    s = build_summary(_run(), results, [])
    return results, s, render_markdown(s), render_html(s)


def test_per_arm_medians_equal_a_hand_computation(reported: Any) -> None:
    results, s, _, _ = reported
    for entry, arm in zip(s["cost"], ARMS, strict=True):
        assert entry["arm"] == arm
        mine = [r for r in results if r.arm == arm]
        for name in COMPARED:
            values = [v for r in mine if (v := _value(r, name)) is not None]
            c = entry[name]
            assert c["measured"]["n"] == len(values), (arm, name)
            assert c["measured"]["median"] == pytest.approx(float(np.median(values)))
            assert c["measured"]["total"] == pytest.approx(float(np.sum(values)))
            assert c["estimated"]["n"] == 0
            assert c["missing"]["n"] == len(mine) - len(values)
    treatment = s["cost"][1]
    assert treatment["cache_read_input_tokens"]["missing"] == {
        "n": 1,
        "reasons": {"no model usage reported": 1},
    }
    assert treatment["turns"]["missing"]["reasons"] == {"the agent did not report turns": 1}
    assert treatment["total_tokens"]["measured"]["sources"] == ["provider usage"]


def test_paired_differences_equal_a_hand_computation(reported: Any) -> None:
    results, s, _, _ = reported
    (pair,) = s["pairs"]
    a = {(r.task, r.trial): r for r in results if r.arm == "control"}
    b = {(r.task, r.trial): r for r in results if r.arm == "treatment"}
    for name in COMPARED:
        pairs = [(_value(a[k], name), _value(b[k], name)) for k in sorted(a)]
        used = [(x, y) for x, y in pairs if x is not None and y is not None]
        xa, xb = [x for x, _ in used], [y for _, y in used]
        diffs = [x - y for x, y in used]
        m = pair["metrics"][name]
        assert (m["pairs"], m["n_used"], m["n_missing"], m["n_estimated"]) == (12, 11, 1, 0)
        assert m["median_a"]["estimate"] == pytest.approx(float(np.median(xa)))
        assert m["median_b"]["estimate"] == pytest.approx(float(np.median(xb)))
        d = m["median_paired_difference"]
        assert d["estimate"] == pytest.approx(float(np.median(diffs)))
        assert d["ci95"] == pytest.approx(_order_statistic_ci(diffs))
        assert d["n"] == 11 and d["censored"] is False
    # The identities hold in every record the pairs are built from.
    for r in results:
        if (r.arm, r.task, r.trial) == MISSING:
            continue
        u = {name: _value(r, name) or 0.0 for name in USAGE}
        assert u["input_tokens"] == sum(u[n] for n in USAGE[1:4]) > 0
        assert u["total_tokens"] == u["input_tokens"] + u["output_tokens"]


def test_missing_usage_is_null_never_zero() -> None:
    results = [make_result(arm, "t", 0, start_order=i) for i, arm in enumerate(ARMS)]
    s = build_summary(make_run(arms=list(ARMS), tasks=[{"id": "t"}], schedule=[]), results, [])
    for entry in s["cost"]:
        for name in (*USAGE[1:4], "total_tokens"):
            assert entry[name]["measured"] == {"n": 0, "total": None, "median": None, "sources": []}
    m = s["pairs"][0]["metrics"]["cache_read_input_tokens"]
    assert m["median_a"]["estimate"] is None and m["n_missing"] == 1
    assert m["median_paired_difference"]["estimate"] is None


def test_tool_discovery_agent_and_models_are_in_the_summary(reported: Any) -> None:
    _, s, _, _ = reported
    assert s["run"]["arm_identities"] == [
        {
            "arm": "control",
            "agent": "claude-code",
            "model": "claude-sonnet-4-5",
            "tool_discovery": "false",
            "agent_version": "2.0.14 (Claude Code)",
            "models_seen": ["claude-sonnet-4-5"],
        },
        {
            "arm": "treatment",
            "agent": "openai",
            "model": "gpt-5-mini",
            "tool_discovery": "not applicable (the adapter offers every tool directly)",
            "agent_version": None,
            "models_seen": sorted(["gpt-5-mini", XSS]),
        },
    ]


def test_identities_fall_back_to_the_agents_of_an_older_run_json() -> None:
    run = make_run(
        arms=["a"],
        agents={"a": {"adapter": "scripted", "settings": {"tool_search": False}}},
        identities={"arms": {"a": {"tool_discovery": False}}},
    )
    (ident,) = build_summary(run, [make_result("a", "t", 0)], [])["run"]["arm_identities"]
    assert ident == {
        "arm": "a",
        "agent": "scripted",
        "model": None,
        "tool_discovery": "false",  # a non-string identity is shown as JSON text
        "agent_version": None,
        "models_seen": [],
    }


def test_reports_show_every_arms_identity_usage_split_and_turns(reported: Any) -> None:
    _, s, md, page = reported
    assert "## Arms" in md and "## Usage and turns by arm" in md
    assert "| Arm | Agent | Model | Tool discovery | Agent version | Models seen |" in md
    assert "| control | claude-code | claude-sonnet-4-5 | false | 2.0.14 (Claude Code) |" in md
    assert "| treatment | openai | gpt-5-mini | not applicable (the adapter offers every " in md
    assert "<h2>Arms</h2>" in page and "<h2>Usage and turns by arm</h2>" in page
    for ident in s["run"]["arm_identities"]:
        assert f"| {ident['arm']} | {ident['agent']} | " in md
        assert html.escape(ident["tool_discovery"], quote=False) in page
    cost = {c["arm"]: c for c in s["cost"]}
    for arm in ARMS:
        turns = cost[arm]["turns"]["measured"]
        read = cost[arm]["cache_read_input_tokens"]["measured"]
        cell = f"{read['median']:,.0f} (n={read['n']})"
        assert cell in md and cell in page
        assert f"| {arm} | {turns['median']:,.0f} (n={turns['n']})" in md
    for label in (
        "Turns",
        "Uncached input tokens",
        "Cache-creation input tokens",
        "Cache-read input tokens",
        "Total tokens",
    ):
        assert f"| control vs treatment | {label} | 11 of 12 (1 missing) |" in md, label
        assert f"<td>{label}</td>" in page, label


def test_agent_written_model_ids_are_escaped(reported: Any) -> None:
    _, _, md, page = reported
    assert XSS not in page and XSS not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;script>" in md


def test_rendering_does_not_depend_on_record_order(reported: Any) -> None:
    results, s, md, page = reported
    shuffled = list(reversed(results))
    again = build_summary(_run(), shuffled, [])
    assert again == s
    assert render_markdown(again) == md and render_html(again) == page


def test_the_split_round_trips_through_summary_json(reported: Any, tmp_path: Path) -> None:
    _, s, md, _ = reported
    paths = write_texts(tmp_path, render_texts(s))
    back = json.loads(paths.summary.read_text(encoding="utf-8"))
    assert back == s
    assert back["cost"][0]["cache_read_input_tokens"] == s["cost"][0]["cache_read_input_tokens"]
    assert back["run"]["arm_identities"][1]["agent_version"] is None
    assert paths.markdown.read_text(encoding="utf-8") == md
