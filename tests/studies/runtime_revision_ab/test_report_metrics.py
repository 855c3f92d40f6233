"""The protocol metric table per arm (``_revision_metrics``): denominators, missing
self-reported counts, measured vs estimated usage, censoring."""

from __future__ import annotations

from pairbench.studies.runtime_revision_ab.report._metrics import arm_metrics, nearest_rank
from pairbench.studies.runtime_revision_ab.report._summary import revision_summary
from studies.runtime_revision_ab.revision_builders import cell, evidence, feature_run


def test_a_response_without_usage_gives_coverage_nine_of_ten_not_zero() -> None:
    ev = evidence(
        "AR-001",
        usage={"requests": 10, "measured": 9, "input_measured": 900, "output_measured": 90,
               "per_request": [[100, 10]] * 9 + [[None, None]]},
    )  # fmt: skip
    m = arm_metrics("candidate", [cell("candidate", "ar-001", 0, ev)], [], 16384, 90000.0)
    u = m["usage"]
    assert (u["measured_requests"], u["requests"]) == (9, 10)
    assert (u["input_measured"], u["output_measured"]) == (900, 90)  # measured requests only
    assert u["executions_fully_measured"] == 0
    # Estimates stay apart, with their estimator: never added to the measured sum.
    assert (u["input_estimated"], u["estimators"]) == (240, ["chars/4 (version 1)"])


def test_missing_runtime_events_are_missing_not_zero() -> None:
    ev = evidence(
        "AR-004",
        events_present=False,
        scope={"prohibited_attempted": None, "denials": None},
        dispatch={"normalized": None, "authorized": None, "denied": None, "executed": None,
                  "effects_without_receipt": None},
        recovery={"errors": None, "transitions_to_new_evidence": None,
                  "recovered_to_success": None, "repeated_identical_calls": None},
        process={"receipts": None},
    )  # fmt: skip
    other = evidence("AR-004", scope={"denials": 1})
    cells = [cell("baseline", "ar-004", 0, ev), cell("baseline", "ar-004", 1, other)]
    m = arm_metrics("baseline", cells, [], None, None)
    assert m["scope"]["denials"] == {"total": 1, "reported": 1, "of": 2}
    assert m["dispatch"]["executed"] == {"total": 2, "reported": 1, "of": 2}
    assert m["dispatch"]["proposed"] == 4  # the proxy saw both
    assert m["recovery"]["errors"] == {"counts": {}, "reported": 1, "of": 2}
    alone = arm_metrics("baseline", cells[:1], [], None, None)
    assert alone["scope"]["denials"]["total"] is None
    assert alone["process"]["receipts"]["counts"] is None
    assert alone["context"]["capacity"] is None


def test_feature_run_metric_rows() -> None:
    base, cand = revision_summary(*feature_run())["metrics"]
    assert (cand["scope"]["unauthorized_effects"], cand["scope"]["prohibited_executed"]) == (1, 1)
    assert cand["completion"]["counts"] == {"verified": 4, "unsupported_claim": 1,
                                            "false_claim": 1, "honest_incomplete": 0,
                                            "no_claim": 2}  # fmt: skip
    assert (cand["usage"]["measured_requests"], cand["usage"]["requests"]) == (21, 22)
    assert cand["usage"]["input_measured"] == 6 * 240 + 810
    e2e = cand["latency"]["end_to_end"]
    assert (e2e["n"], e2e["censored"], e2e["sum_ms"], e2e["median_ms"]) == (8, 1, 96200.0, 1000.0)
    assert cand["latency"]["streamed"] is False
    ctx = cand["context"]
    assert (ctx["measured"]["n"], ctx["measured"]["median"], ctx["measured"]["p90"]) == (
        21,
        100,
        150,
    )
    assert (ctx["capacity"], ctx["output_reservation"]) == (16384, 1024)
    assert base["infrastructure"]["kept_attempts"] == 1
    assert base["infrastructure"]["final_infra"] == 1
    assert base["executions"] == 8 and base["with_evidence"] == 7


def test_censoring_reaching_the_median_reads_above_the_limit() -> None:
    slow = {"end_to_end_ms": 90000.0, "timed_out": True}
    cells = [cell("candidate", "ar-005", p, evidence("AR-005", latency=slow)) for p in range(2)]
    cells.append(cell("candidate", "ar-005", 2, evidence("AR-005")))
    e2e = arm_metrics("candidate", cells, [], None, 90000.0)["latency"]["end_to_end"]
    assert (e2e["median_ms"], e2e["median_display"], e2e["censored"]) == (
        None, "> 90000 ms", 2,
    )  # fmt: skip


def test_paired_differences_keep_censoring() -> None:
    p = revision_summary(*feature_run())["paired_differences"]
    ar5 = next(t for t in p["tasks"] if t["scenario"] == "AR-005")
    assert (ar5["median_difference_ms"], ar5["median_low_ms"], ar5["median_high_ms"]) == (
        44300.0, 44300.0, None,
    )  # fmt: skip
    assert (ar5["censored"], ar5["censoring_could_move"]) == (1, True)
    assert (p["all"]["pairs"], p["all"]["sum_difference_ms"], p["all"]["median_difference_ms"]) == (
        7, 86800.0, -200.0,
    )  # fmt: skip


def test_totals_beside_the_conditional_subset() -> None:
    totals = {t["arm"]: t for t in revision_summary(*feature_run())["totals"]}
    cand = totals["candidate"]
    assert (cand["all"]["input_measured"], cand["all"]["timed_out"]) == (2250, 1)
    assert (cand["conditional"]["cells"], cand["conditional"]["input_measured"]) == (3, 1290)
    assert (cand["conditional"]["measured_requests"], cand["conditional"]["requests"]) == (13, 14)


def test_nearest_rank_is_an_observed_value() -> None:
    assert nearest_rank([5, 1, 3], 0.9) == 5 and nearest_rank([5, 1, 3], 0.5) == 3
