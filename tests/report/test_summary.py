import json
import math
import statistics
from collections import Counter

import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from helpers.report_builders import MakeResult, RunScenario, metrics_of, wall_ms
from pairbench.grading._metrics import compute_metrics
from pairbench.report import SCHEMA_ID
from pairbench.report._write import summary_json
from pairbench.report.summary._build import build_summary
from pairbench.store._records import SCORED_OUTCOMES, Metric, ToolCallTiming, TrialResult


def test_schema_id_and_json_round_trip(scenario: RunScenario) -> None:
    run, results, infra = scenario
    s = build_summary(run, results, infra)
    assert s["schema_id"] == SCHEMA_ID == "pairbench.summary/3"
    assert json.loads(summary_json(s)) == s
    assert list(s) == [
        "schema_id", "confidence", "run", "bootstrap_reps", "plots_drawn", "empty", "trials",
        "not_run", "planned_trials",
        "kept_attempts", "replaced_attempts", "arms", "pairs", "primary", "hypotheses", "tasks",
        "tiers",
        "crossover",
        "transport", "model_requests", "security", "cost", "seeding", "mounted_proof",
        "manual_review",
        "fields", "failures", "latency", "attention", "study",
    ]  # fmt: skip


def test_empty_run_has_zero_trials() -> None:
    from helpers.report_builders import make_run

    s = build_summary(make_run(), [], [])
    assert s["trials"] == 0 and s["kept_attempts"] == 0 and s["empty"] is True
    assert s["planned_trials"] == 36
    assert all(a["success"]["n"] == 0 and a["success"]["estimate"] is None for a in s["arms"])
    json.loads(summary_json(s))  # no NaN anywhere


def test_arm_counts_and_wilson_match_independent_computation(scenario: RunScenario) -> None:
    run, results, infra = scenario
    s = build_summary(run, results, infra)
    assert s["trials"] == 35 and s["not_run"] == 1 and s["planned_trials"] == 36
    assert s["kept_attempts"] == 1 and s["empty"] is False
    for arm in s["arms"]:
        mine = [r for r in results if r.arm == arm["arm"]]
        expected = Counter(r.outcome for r in mine)
        expected["infra"] += sum(r.arm == arm["arm"] for r in infra)
        assert {k: v for k, v in arm["outcomes"].items() if v} == dict(+expected)
        scored = [r for r in mine if r.outcome in SCORED_OUTCOMES]
        k = sum(r.outcome == "passed" for r in scored)
        low, high = proportion_confint(k, len(scored), alpha=0.05, method="wilson")
        assert (arm["success"]["k"], arm["success"]["n"]) == (k, len(scored))
        assert arm["success"]["low"] == pytest.approx(low, abs=1e-12)
        assert arm["success"]["high"] == pytest.approx(high, abs=1e-12)
    by_arm = {a["arm"]: a for a in s["arms"]}
    assert by_arm["baseline"]["outcomes"]["not_run"] == 1
    assert by_arm["baseline"]["scored"] == 11
    assert by_arm["baseline"]["success_not_run_as_miss"]["n"] == 12
    remote = by_arm["remote-http"]
    assert remote["invalid_trials"] == 1
    assert remote["success_valid_surface"]["n"] == 11
    assert remote["outcomes"]["infra"] == 1 and remote["outcomes"]["timeout"] == 1


def test_mcnemar_only_for_declared_pairs(scenario: RunScenario) -> None:
    run, results, infra = scenario
    s = build_summary(run, results, infra)
    pairs = {(p["a"], p["b"]): p for p in s["pairs"]}
    assert list(pairs) == [
        ("baseline", "local-stdio"), ("baseline", "remote-http"), ("local-stdio", "remote-http"),
    ]  # fmt: skip
    for key, p in pairs.items():
        if key == ("local-stdio", "remote-http"):
            assert p["declared"] is True
            a = {(r.task, r.trial): r.outcome for r in results if r.arm == key[0]}
            b = {(r.task, r.trial): r.outcome for r in results if r.arm == key[1]}
            matched = [
                k for k in a if k in b and a[k] in SCORED_OUTCOMES and b[k] in SCORED_OUTCOMES
            ]
            a_only = sum(a[k] == "passed" and b[k] != "passed" for k in matched)
            b_only = sum(b[k] == "passed" and a[k] != "passed" for k in matched)
            assert (p["a_only"], p["b_only"]) == (a_only, b_only)
            assert p["pairs"] == len(matched) == 12  # agent_error and timeout are scored
            expected = binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue
            assert p["mcnemar_exact_p"] == pytest.approx(expected, rel=1e-12)
        else:
            assert p["declared"] is False
            assert p["mcnemar_exact_p"] is None and p["mcnemar_holm_p"] is None
            assert p["test"] == "not declared: no test"


def test_declared_in_reverse_order_still_declared(scenario: RunScenario) -> None:
    run, results, infra = scenario
    run["comparisons"] = [["remote-http", "baseline"]]
    s = build_summary(run, results, infra)
    declared = [(p["a"], p["b"]) for p in s["pairs"] if p["declared"]]
    assert declared == [("baseline", "remote-http")]


def test_wall_time_difference_matches_independent_median(scenario: RunScenario) -> None:
    run, results, infra = scenario
    s = build_summary(run, results, infra)
    p = next(x for x in s["pairs"] if (x["a"], x["b"]) == ("local-stdio", "remote-http"))
    a = {(r.task, r.trial): r for r in results if r.arm == "local-stdio"}
    b = {(r.task, r.trial): r for r in results if r.arm == "remote-http"}
    keys = [k for k in a if k in b]
    diffs = [wall_ms(a[k]) - wall_ms(b[k]) for k in keys]
    # run.json here has no trial timeout: the timed-out trial (B) keeps its recorded wall
    # time as a lower bound, so its difference is an upper bound and could be -infinity.
    lowest = [
        -math.inf if b[k].outcome == "timeout" else d for k, d in zip(keys, diffs, strict=True)
    ]
    wall = p["metrics"]["wall_ms"]["median_paired_difference"]
    assert wall["n"] == len(diffs) == 12
    assert wall["estimate"] == pytest.approx(statistics.median(diffs))
    c = wall["censored"]
    assert (c["pairs"], c["a_only"], c["b_only"], c["both"]) == (1, 0, 1, 0)
    assert c["median_low"] == pytest.approx(statistics.median(lowest))
    assert c["median_could_move"] is (statistics.median(lowest) != statistics.median(diffs))
    assert wall["ci95"][0] is not None and wall["ci95"][0] <= wall["estimate"] <= wall["ci95"][1]


def test_tasks_tiers_crossover_order(scenario: RunScenario) -> None:
    run, results, infra = scenario
    s = build_summary(run, results, infra)
    assert [t["task"] for t in s["tasks"]] == ["read-title", "list-labels", "close-issue"]
    assert [t["tier"] for t in s["tiers"]] == [1, 2]
    assert s["tiers"][0]["tasks"] == ["read-title", "list-labels"]
    for t in s["crossover"]["tasks_differing"]:
        assert len(set(t["passed"].values())) > 1
    positions = [row["position"] for row in s["crossover"]["by_start_order"]]
    assert positions == [0, 1, 2]
    total = sum(row["arms"]["baseline"]["n"] for row in s["crossover"]["by_start_order"])
    assert total == 11


def test_transport_and_security(scenario: RunScenario) -> None:
    run, results, infra = scenario
    s = build_summary(run, results, infra)
    t = {x["arm"]: x for x in s["transport"]}
    assert t["baseline"]["connect_ms"] == {"median": None, "n_trials": 0}
    calls = [
        c.client_ms for r in results if r.arm == "local-stdio" and r.metrics
        for c in r.metrics.tool_calls if c.client_ms is not None
    ]  # fmt: skip
    assert t["local-stdio"]["client_call_ms"]["median"] == pytest.approx(statistics.median(calls))
    sec = {x["arm"]: x for x in s["security"]}
    assert sec["baseline"]["injection_applicable"] is False
    assert sec["baseline"]["prompt_injection_compliance"]["n"] == 0
    applies = [
        r.security.prompt_injection_compliance for r in results
        if r.arm == "remote-http" and r.outcome in SCORED_OUTCOMES and r.security
    ]  # fmt: skip
    assert sec["remote-http"]["prompt_injection_compliance"]["k"] == sum(bool(x) for x in applies)
    # Every call of the scenario is of tracker.get: the one tool's latency is the pooled one.
    (tool,) = t["local-stdio"]["by_tool"]
    assert tool["tool"] == "tracker.get" and tool["calls"] == len(calls)
    assert tool["client_call_ms"] == t["local-stdio"]["client_call_ms"]
    assert tool["cold_start_ms"] == t["local-stdio"]["cold_start_ms"]
    assert t["baseline"]["by_tool"] == []  # no tool calls
    checked = [
        r.security.token_shaped_in_output for r in results
        if r.arm == "remote-http" and r.outcome in SCORED_OUTCOMES and r.security
        and r.security.token_shaped_in_output is not None
    ]  # fmt: skip
    token = sec["remote-http"]["token_shaped_in_output"]
    assert token["n"] == len(checked) > 0  # the odd records predate the detector: not counted
    assert token["k"] == sum(checked) > 0
    assert sec["local-stdio"]["token_shaped_in_output"]["k"] == 0


def _calls(make: MakeResult, arm: str, trial: int, *calls: tuple[str, str, float]) -> TrialResult:
    """A trial whose tool calls are ``(server, tool, client_ms)``, with cold starts per tool
    as the grader computes them."""
    timings = [ToolCallTiming(server=sv, tool=tool, client_ms=ms) for sv, tool, ms in calls]
    r = make(arm, "read-title", trial)
    events = [
        e
        for i, (sv, tool, ms) in enumerate(calls)
        for e in (
            {"kind": "tool_call", "id": str(i), "server": sv, "tool": tool},
            {"kind": "tool_result", "id": str(i), "client_ms": ms},
        )
    ]
    m = compute_metrics(1000.0, events, None, None)
    assert m.tool_calls == timings
    return r.model_copy(
        update={
            "metrics": metrics_of(r).model_copy(
                update={
                    "tool_calls": m.tool_calls,
                    "cold_start_ms": m.cold_start_ms,
                    "cold_start_ms_by_tool": m.cold_start_ms_by_tool,
                }
            )
        }
    )


def test_latency_and_cold_start_per_tool(make: MakeResult) -> None:
    from helpers.report_builders import make_run

    results = [
        # search: 300 - median(100, 140) = 180; get: 50 - median(90, 70) = -30 (kept).
        _calls(make, "local-stdio", 0, *[("tracker", "search", 300.0), ("tracker", "get", 50.0),
              ("tracker", "search", 100.0), ("tracker", "get", 90.0),
              ("docs", "search", 60.0), ("tracker", "search", 140.0), ("tracker", "get", 70.0)]),
        # search: 200 - 120 = 80; get once: no cold start; docs.search: 20 - 40 = -20.
        _calls(make, "local-stdio", 1, *[("tracker", "search", 200.0), ("tracker", "get", 30.0),
              ("tracker", "search", 120.0), ("docs", "search", 20.0), ("docs", "search", 40.0)]),
        _calls(make, "remote-http", 0, ("tracker", "get", 10.0), ("tracker", "get", 4.0)),
    ]  # fmt: skip
    # A record from before per-tool metrics: its calls count in the pooled values only.
    old = make("remote-http", "read-title", 1, calls=(7.0, 9.0))
    old_metrics = metrics_of(old).model_copy(update={"cold_start_ms_by_tool": {}})
    results.append(old.model_copy(update={"metrics": old_metrics}))
    t = {x["arm"]: x for x in build_summary(make_run(), results, [])["transport"]}
    tools = {x["tool"]: x for x in t["local-stdio"]["by_tool"]}
    assert list(tools) == ["docs.search", "tracker.get", "tracker.search"]
    assert tools["tracker.search"] == {
        "tool": "tracker.search",
        "calls": 5,
        "client_call_ms": {"median": 140.0, "n_calls": 5},  # 300, 100, 140, 200, 120
        "cold_start_ms": {"median": 130.0, "n_trials": 2},  # 180 and 80
    }
    assert tools["tracker.get"]["calls"] == 4
    assert tools["tracker.get"]["client_call_ms"] == {"median": 60.0, "n_calls": 4}
    assert tools["tracker.get"]["cold_start_ms"] == {"median": -30.0, "n_trials": 1}
    assert tools["docs.search"]["cold_start_ms"] == {"median": -20.0, "n_trials": 1}
    # Pooled: trial 0 is 300 - median(50, 100, 90, 60, 140, 70) = 220, trial 1 is
    # 200 - median(30, 120, 20, 40) = 165.
    assert t["local-stdio"]["cold_start_ms"] == {"median": 192.5, "n_trials": 2}
    (remote,) = t["remote-http"]["by_tool"]
    assert remote["tool"] == "tracker.get" and remote["calls"] == 2
    assert remote["cold_start_ms"] == {"median": 6.0, "n_trials": 1}
    assert t["remote-http"]["client_call_ms"]["n_calls"] == 4  # the old record's calls too


def test_token_shapes_are_a_rate_apart_from_secrets(make: MakeResult) -> None:
    from helpers.report_builders import make_run

    results = [
        make("local-stdio", "read-title", 0, token=True),
        make("local-stdio", "read-title", 1, token=False, secret=True),
        make("local-stdio", "read-title", 2, token=False),
        make("local-stdio", "read-title", 3),  # a record from before the token detector
    ]
    sec = build_summary(make_run(), results, [])["security"][1]
    assert sec["arm"] == "local-stdio"
    assert (sec["secret_in_output"]["k"], sec["secret_in_output"]["n"]) == (1, 4)
    token = sec["token_shaped_in_output"]
    assert (token["k"], token["n"]) == (1, 3)  # over the trials that ran the detector
    low, high = proportion_confint(1, 3, alpha=0.05, method="wilson")
    assert token["low"] == pytest.approx(low) and token["high"] == pytest.approx(high)


def test_cost_keeps_measured_and_estimated_apart(make: MakeResult) -> None:
    from helpers.report_builders import make_run

    est = Metric(value=50.0, provenance="estimated", estimator="chars/4 v1, full coverage")
    results = [
        make("baseline", "read-title", 0, tokens=Metric.measured(100.0, "provider usage")),
        make("baseline", "read-title", 1, tokens=est),
        make("baseline", "read-title", 2),
    ]
    s = build_summary(make_run(), results, [])
    c = s["cost"][0]["input_tokens"]
    assert c["measured"]["total"] == 100.0 and c["measured"]["n"] == 1
    assert c["estimated"]["total"] == 50.0 and c["estimated"]["n"] == 1
    assert c["missing"] == {"n": 1, "reasons": {"scripted agent reports no usage": 1}}
    assert s["cost"][1]["cost_usd"]["measured"]["n"] == 0  # no trials at all in local-stdio


def test_attention_lists_with_denominators(scenario: RunScenario) -> None:
    run, results, infra = scenario
    a = build_summary(run, results, infra)["attention"]
    assert a["planned_trials"] == 36 and a["recorded_trials"] == 36 and a["scored_trials"] == 35
    assert [(e["arm"], e["reason"]) for e in a["not_run"]] == [("baseline", "budget stop")]
    assert [e["reason"] for e in a["infra"]] == ["fixture not ready after 10s"]
    assert len(a["agent_error"]) == 1 and a["interrupted"] == []


def test_retry_keeps_latest_attempt(make: MakeResult) -> None:
    from helpers.report_builders import make_run

    results = [
        make("baseline", "read-title", 0, "interrupted", attempt=1),
        make("baseline", "read-title", 0, "passed", attempt=2),
    ]
    s = build_summary(make_run(), results, [])
    assert s["trials"] == 1
    assert s["arms"][0]["outcomes"]["passed"] == 1 and s["arms"][0]["outcomes"]["interrupted"] == 0


def test_interrupted_attempts_in_kept_list_count_as_interrupted(make: MakeResult) -> None:
    from helpers.report_builders import make_run

    results = [make("baseline", "read-title", 0, "passed", attempt=2)]
    kept = [
        make("baseline", "read-title", 0, "interrupted", metrics=False, reason="SIGINT"),
        make("baseline", "read-title", 1, "infra", metrics=False, reason="port in use"),
    ]
    s = build_summary(make_run(), results, kept)
    outcomes = s["arms"][0]["outcomes"]
    assert (outcomes["passed"], outcomes["interrupted"], outcomes["infra"]) == (1, 1, 1)
    assert s["attention"]["infra_attempts"] == 1 and s["attention"]["interrupted_attempts"] == 1


def test_planned_trials_from_run_json_shapes() -> None:
    from helpers.report_builders import make_run

    pairs = {"pairs": [{"order": ["a", "b"]}, {"order": ["b", "a"]}]}
    assert build_summary(make_run(schedule=pairs), [], [])["planned_trials"] == 4
    assert build_summary(make_run(planned_trials=9), [], [])["planned_trials"] == 9


def test_only_not_run_records_is_empty(make: MakeResult) -> None:
    from helpers.report_builders import make_run

    results = [make("baseline", "read-title", 0, "not_run", metrics=False, reason="run stopped")]
    s = build_summary(make_run(), results, [])
    assert s["empty"] is True and s["trials"] == 0 and s["not_run"] == 1


def test_failure_reasons_group_every_failed_trial_in_report_order() -> None:
    """Counted here by hand from the records, in the order the report lists trials (task as
    declared, trial, arm as declared): counts per arm, ten examples, and no reason and an
    empty reason are one group."""
    from helpers.report_builders import ARMS, TASKS, TRIALS, make_result, make_run

    results: list[TrialResult] = []
    for t, (task, _tier) in enumerate(reversed(TASKS)):  # stored in another order
        for trial in reversed(range(TRIALS)):
            for arm in ARMS:
                if arm == "baseline":
                    outcome, reason = "failed", "wrong: title"
                elif trial == 0:
                    outcome, reason = "timeout", ""
                elif arm == "remote-http" and t == 0:
                    outcome, reason = "agent_error", "exit 1"
                else:
                    outcome, reason = "passed", ""
                results.append(make_result(arm, task, trial, outcome, reason=reason))
    s = build_summary(make_run(), results, [])

    order = {(task, trial, arm): i for i, (task, trial, arm) in enumerate(
        (task, trial, arm) for task, _ in TASKS for trial in range(TRIALS) for arm in ARMS
    )}  # fmt: skip
    groups: dict[tuple[str, str], list[TrialResult]] = {}
    for r in sorted(results, key=lambda r: order[r.task, r.trial, r.arm]):
        if r.outcome != "passed":
            groups.setdefault((r.outcome, r.reason or ""), []).append(r)
    expected = [
        {
            "outcome": outcome,
            "reason": reason,
            "trials": len(rs),
            "arms": {a: n for a in ARMS if (n := sum(r.arm == a for r in rs))},
            "examples": [{"arm": r.arm, "task": r.task, "trial": r.trial} for r in rs[:10]],
        }
        for (outcome, reason), rs in sorted(
            groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0], kv[0][1])
        )
    ]
    assert s["failures"] == expected
    assert [g["trials"] for g in s["failures"]] == [12, 6, 3]
    assert len(s["failures"][0]["examples"]) == 10
