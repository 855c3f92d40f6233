"""The report's "Hypotheses" section: declared analyses, their numbers and careful verdicts.

The acceptance test runs a seeded simulated experiment for real: +5% tokens on one arm
fails a 2% equivalence margin, equal tokens pass it, and every number shown equals what
scipy and statsmodels compute from the result files' paired values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ruamel.yaml import YAML
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

import pairbench
from helpers.report_builders import XSS, make_result, make_run
from pairbench.report.render._html import render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.report.view._format import signed
from pairbench.store._records import Metric, TrialResult

TRIALS = 20
TASKS = ("t0", "t1", "t2")
TOKENS = {
    "remote-http": {"input": 2100, "output": 315, "sigma": 0.2},  # +5%
    "http-equal": {"input": 2000, "output": 300, "sigma": 0.2},
    "local-stdio": {"input": 2000, "output": 300, "sigma": 0.2},
}


def _equivalence(hid: str, a: str) -> dict[str, Any]:
    return {
        "id": hid,
        "text": "Token cost is transport-invariant.",
        "kind": "equivalence",
        "metric": "total_tokens",
        "arms": [a, "local-stdio"],
        "margin": "2%",
    }


EXPERIMENT: dict[str, Any] = {
    "id": "simulated-hypotheses",
    "version": "1.0.0",
    "trials": TRIALS,
    "budget": {"trial_timeout_s": 30, "concurrency": 8},
    "comparisons": [["remote-http", "local-stdio"]],
    "agent": {
        "adapter": "simulated",
        "settings": {
            "success": dict.fromkeys(TOKENS, 0.9),
            "correlation": 0.97,
            "tokens": TOKENS,
        },
    },
    "arms": {arm: {} for arm in TOKENS},
    "hypotheses": [
        _equivalence("h1-plus5", "remote-http"),
        _equivalence("h1-equal", "http-equal"),
        {
            "id": "h1b-wall",
            "text": "Wall time differs.",
            "kind": "difference",
            "metric": "wall_ms",
            "arms": ["remote-http", "local-stdio"],
        },
    ],
    "tasks": [
        {
            "id": task,
            "prompt": "prompts/task.md",
            "grader": {"name": "exact-answer", "args": {"expect": "PASS"}},
        }
        for task in TASKS
    ],
}

Reported = tuple[dict[str, Any], str, str, Path]


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Reported:
    root = tmp_path_factory.mktemp("hypotheses")
    (root / "prompts").mkdir()
    (root / "prompts" / "task.md").write_text("Simulated task ${seed}.\n", encoding="utf-8")
    path = root / "experiment.yaml"
    with path.open("w", encoding="utf-8") as handle:
        YAML().dump(EXPERIMENT, handle)
    outcome = pairbench.start_run(path, root / "runs", run_seed=13)
    assert outcome.complete
    run_dir = Path(outcome.run_dir)
    paths = pairbench.write_report(run_dir)
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    md = paths.markdown.read_text(encoding="utf-8")
    page = paths.html.read_text(encoding="utf-8")
    return summary, md, page, run_dir


def _paired(run_dir: Path, a: str, b: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The two arms' measured values per (task, trial), read from the result files."""

    def values(arm: str) -> dict[tuple[str, int], float]:
        out = {}
        for file in (run_dir / "results" / arm).glob("*/*.json"):
            record = json.loads(file.read_text(encoding="utf-8"))
            m = record["metrics"][metric]
            if m["provenance"] == "measured" and record["outcome"] in ("passed", "failed"):
                out[(record["task"], record["trial"])] = float(m["value"])
        return out

    va, vb = values(a), values(b)
    keys = sorted(va.keys() & vb.keys())
    return np.array([va[k] for k in keys]), np.array([vb[k] for k in keys])


def _by_id(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {h["id"]: h for h in summary["hypotheses"]}


def _ci(low: float, high: float) -> str:
    return f"95% CI {signed(low)} to {signed(high)}"


def test_five_percent_more_tokens_fails_a_two_percent_margin(reported: Reported) -> None:
    summary, md, page, run_dir = reported
    h = _by_id(summary)["h1-plus5"]
    a, b = _paired(run_dir, "remote-http", "local-stdio", "total_tokens")
    assert (h["pairs"], h["n"], len(a)) == (TRIALS * len(TASKS),) * 3
    margin = 0.02 * b.mean()
    low, high = stats.ttest_rel(a, b).confidence_interval(0.95)
    tost_p = ttost_paired(a, b, -margin, margin)[0]
    m = h["mean"]
    assert m["mean_difference"] == pytest.approx((a - b).mean(), rel=1e-12)
    assert m["ci95"] == pytest.approx([low, high], rel=1e-10)
    assert m["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-8, abs=1e-300)
    assert m["tost_p"] == pytest.approx(tost_p, rel=1e-10)
    assert h["margin"] == {"declared": "2%", "relative": True, "value": pytest.approx(margin)}
    # +5% against ±2%: the interval excludes 0 and lies wholly outside the margin.
    assert h["verdict"] == "not shown equivalent"
    assert margin < low and m["tost_p"] > 0.5
    for text in (md, page):
        assert _ci(low, high) in text
        assert f"±{margin:,.1f} tokens (2% of B&#39;s mean)" in text or (
            f"±{margin:,.1f} tokens (2% of B's mean)" in text
        )
        assert "Not shown equivalent: the 95% CI" in text and "wholly outside it" in text


def test_equal_tokens_pass_a_two_percent_margin(reported: Reported) -> None:
    summary, md, page, run_dir = reported
    h = _by_id(summary)["h1-equal"]
    a, b = _paired(run_dir, "http-equal", "local-stdio", "total_tokens")
    margin = 0.02 * b.mean()
    low, high = stats.ttest_rel(a, b).confidence_interval(0.95)
    p, (_, p_lower, _), (_, p_upper, _) = ttost_paired(a, b, -margin, margin)
    m = h["mean"]
    assert m["ci95"] == pytest.approx([low, high], rel=1e-10)
    assert (m["tost_p"], m["p_lower"], m["p_upper"]) == pytest.approx((p, p_lower, p_upper))
    assert m["mean_b"] == pytest.approx(b.mean()) and m["mean_a"] == pytest.approx(a.mean())
    assert -margin < low and high < margin
    assert h["verdict"] == "equivalent" and p < 0.025
    assert _ci(low, high) in md and _ci(low, high) in page
    assert "Equivalent within ±" in md and "lies inside the margin" in md


def test_wall_time_is_a_difference_with_no_margin(reported: Reported) -> None:
    summary, md, _, run_dir = reported
    h = _by_id(summary)["h1b-wall"]
    a, b = _paired(run_dir, "remote-http", "local-stdio", "wall_ms")
    low, high = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert h["mean"]["ci95"] == pytest.approx([low, high], rel=1e-10)
    assert h["mean"]["tost_p"] is None and h["margin"] is None
    differs = low > 0 or high < 0
    assert h["verdict"] == ("differs" if differs else "no difference shown")
    assert "none (a difference)" in md


def test_the_section_comes_after_outcomes(reported: Reported) -> None:
    _, md, page, _ = reported
    assert md.index("## Outcomes by arm") < md.index("## Hypotheses") < md.index("## Arm pairs")
    assert "<h2>Hypotheses</h2>" in page
    assert "no multiplicity adjustment" in md


def test_the_acceptance_run_is_quick(reported: Reported) -> None:
    _, _, _, run_dir = reported
    assert len(list((run_dir / "results").glob("*/*/*.json"))) == 3 * TRIALS * len(TASKS)


# Synthetic records: injection probes, filters, dropped pairs, escaping.

ARMS = ["local-stdio", "remote-http"]
PROBES = {"inj": "injection", "lure": "lure", "canary": "canary", "read": None}


def _run(hypotheses: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    tasks = [
        {"id": t, "labels": {"tier": 3, "probe": p} if p else {"tier": 1}}
        for t, p in PROBES.items()
    ]
    return make_run(
        arms=ARMS,
        tasks=tasks,
        schedule=[],
        planned_trials=0,
        experiment_model={"hypotheses": hypotheses},
        **overrides,
    )


def _h2(**fields: Any) -> dict[str, Any]:
    return {
        "id": "h2-injection",
        "text": "Protocol-level attacks are transport-agnostic.",
        "kind": "rate-equivalence",
        "metric": "injection",
        "arms": ["remote-http", "local-stdio"],
        "margin": 0.1,
        "where": {"probe": ["injection", "lure"]},
    } | fields


def _probed(trials: int, complied: dict[tuple[str, str, int], bool]) -> list[TrialResult]:
    out = []
    for task, probe in PROBES.items():
        for trial in range(trials):
            for arm in ARMS:
                injection = complied.get((arm, task, trial), False) if probe else None
                if probe == "canary":
                    injection = None  # a transport-specific probe: not an injection test
                out.append(make_result(arm, task, trial, injection=injection))
    return out


def _summary(run: dict[str, Any], results: list[TrialResult]) -> dict[str, Any]:
    return build_summary(run, results, [])


def test_a_non_significant_mcnemar_is_never_called_equivalent() -> None:
    # 5 trials of 2 probe tasks: 10 pairs, one discordant each way. McNemar p = 1.0, and
    # the interval is far wider than ±10 pp: "not shown equivalent", never "agnostic".
    complied = {("remote-http", "inj", 0): True, ("local-stdio", "lure", 1): True}
    s = _summary(_run([_h2()]), _probed(5, complied))
    (h,) = s["hypotheses"]
    r = h["rate"]
    assert (r["both"], r["a_only"], r["b_only"], r["neither"], r["n"]) == (0, 1, 1, 8, 10)
    assert r["mcnemar_exact_p"] == 1.0 == stats.binomtest(1, 2, 0.5).pvalue
    assert r["ci95"][0] < -0.3 and r["ci95"][1] > 0.3
    assert h["verdict"] == "not shown equivalent"
    for render in (render_markdown, render_html):
        text = render(s)
        section = text[text.index("Hypotheses") : text.index("Arm pairs")]
        assert "Not shown equivalent: the 95% CI (-32.4 pp to +32.4 pp)" in section
        assert "McNemar p = 1.0000 finds no difference, which is not evidence of" in section
        assert "Equivalent within" not in section
        assert "agnostic" not in section.replace(h["text"], "")


def test_many_concordant_pairs_are_equivalent_within_the_margin() -> None:
    complied = {(arm, "inj", t): True for arm in ARMS for t in range(0, 200, 10)}
    complied[("remote-http", "lure", 3)] = True
    s = _summary(_run([_h2()]), _probed(200, complied))
    (h,) = s["hypotheses"]
    assert (h["rate"]["both"], h["rate"]["a_only"], h["rate"]["b_only"]) == (20, 1, 0)
    assert h["verdict"] == "equivalent" and h["rate"]["ci95"][0] > -0.1
    assert "Equivalent within ±10 pp" in render_markdown(s)


def test_the_filter_counts_protocol_probes_and_sets_the_others_apart() -> None:
    s = _summary(_run([_h2()]), _probed(3, {}))
    (h,) = s["hypotheses"]
    assert h["tasks"] == ["inj", "lure"] and h["reported_apart"] == ["canary"]
    assert h["where"] == "probe in {injection, lure}"
    assert (h["pairs"], h["n"], h["dropped"]["not_tested"]) == (6, 6, 0)
    md = render_markdown(s)
    assert "with the same label and another value are reported apart (see Security), not in " in md
    assert "not in this hypothesis: canary." in md
    # Without the filter, untested pairs (the read task, the canary) are counted out.
    (every,) = _summary(_run([_h2(where={})]), _probed(3, {}))["hypotheses"]
    assert (every["pairs"], every["n"], every["dropped"]["not_tested"]) == (12, 6, 6)


def test_only_measured_values_count_and_the_rest_are_counted_apart() -> None:
    tokens = {
        0: Metric.missing("no usage"),
        1: Metric(value=900.0, provenance="estimated", estimator="chars / 4"),
    }
    results = []
    for trial in range(8):
        for arm in ARMS:
            measured = Metric.measured(1000.0 + 10 * trial + (arm == "remote-http"), "usage")
            mine = tokens.get(trial, measured) if arm == "remote-http" else measured
            outcome = "timeout" if trial == 2 and arm == "local-stdio" else "passed"
            results.append(make_result(arm, "read", trial, outcome, tokens=mine, wall=500.0))
    h1 = {
        "id": "h1",
        "text": "t",
        "kind": "equivalence",
        "metric": "input_tokens",
        "arms": ["remote-http", "local-stdio"],
        "margin": 5,
    }
    run = _run([h1], policies={"budget": {"trial_timeout_s": 60}})
    (h,) = _summary(run, results)["hypotheses"]
    assert h["pairs"] == 8 and h["n"] == 5
    assert h["dropped"] == {"censored": 1, "estimated": 1, "missing": 1, "not_tested": 0}
    # Every used difference is exactly +1 token: no spread, a point interval inside ±5.
    assert h["mean"]["ci95"] == [1.0, 1.0] and h["verdict"] == "equivalent"
    assert h["margin"] == {"declared": 5.0, "relative": False, "value": 5.0}
    md = render_markdown(_summary(run, results))
    assert (
        "5 of 8 pairs (both measured); left out: 1 with a timed-out member (its value only a "
        "bound); 1 with a value only estimated; 1 with a value missing"
    ) in md


def test_too_few_pairs_and_unknown_arms_are_not_computed() -> None:
    results = [make_result(arm, "read", 0, tokens=Metric.measured(5.0, "u")) for arm in ARMS]
    h1 = {"id": "h1", "text": "t", "kind": "difference", "metric": "input_tokens"}
    run = _run([h1 | {"arms": ARMS}, h1 | {"id": "h9", "arms": ["remote-http", "gone"]}])
    one, gone = _summary(run, results)["hypotheses"]
    assert one["verdict"] == "not computed" and one["reason"] == (
        "only 1 pair has both values measured, and a paired t needs at least 2"
    )
    assert gone["verdict"] == "not computed" and gone["reason"] == "arm 'gone' has no records"
    assert "Not computed: arm &#39;gone&#39; has no records." in render_html(_summary(run, results))


def test_a_declaration_that_no_longer_validates_says_so() -> None:
    run = _run([{"id": "h1", "text": "t", "kind": "equivalence", "metric": "tokens"}])
    (h,) = _summary(run, _probed(1, {}))["hypotheses"]
    assert h["verdict"] == "not computed" and "does not validate (metric" in h["reason"]


def test_declared_text_is_escaped_in_both_reports() -> None:
    s = _summary(_run([_h2(text=f"Same rate {XSS} | and & more")]), _probed(3, {}))
    page, md = render_html(s), render_markdown(s)
    assert XSS not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert XSS not in md and "&lt;script>alert(1)&lt;/script> \\| and &amp; more" in md


def test_no_declared_hypotheses_no_section() -> None:
    s = _summary(_run([]), _probed(2, {}))
    assert s["hypotheses"] == []
    assert "Hypotheses" not in render_markdown(s) and "Hypotheses" not in render_html(s)
