"""The protocol's cost projection (§12) and the plan command's refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairbench._errors import PairbenchError
from pairbench.studies.attribution_reliability._cost import (
    PROTOCOL_INPUTS,
    PROTOCOL_PRINTED,
    SessionCounts,
    inputs_from_run,
    project,
    projection_lines,
)
from pairbench.studies.attribution_reliability._manifest import Case

PROTOCOL_COUNTS = SessionCounts(16, 44, 20)


def test_the_protocols_rounded_inputs_give_4_58_expected_and_17_56_worst() -> None:
    p = project(PROTOCOL_INPUTS, PROTOCOL_COUNTS, ceiling_usd=20.0)
    # By hand: 16 x 0.172 + 44 x 0.032 + 20 x 0.021 = 2.752 + 1.408 + 0.420.
    assert p.expected_usd == pytest.approx(4.58, abs=1e-9)
    # 60 x 0.272 + 20 x (2 x 0.031) = 16.32 + 1.24.
    assert p.worst_usd == pytest.approx(17.56, abs=1e-9)
    assert p.worst_with_calibration_usd == pytest.approx(18.53, abs=1e-9)
    assert p.within_ceiling
    text = "\n".join(projection_lines(p))
    assert "$4.58" in text and "$17.56" in text and "$18.53" in text
    # The protocol's own figures are shown beside, with why they differ.
    printed = [f"${v:.2f}" for v in PROTOCOL_PRINTED]
    assert all(v in text for v in printed) and "unrounded" in text


def test_the_gap_to_the_printed_figures_fits_the_rounding_of_the_inputs() -> None:
    # Each printed input is rounded to $0.001: the most the totals can move.
    expected_slack = sum(PROTOCOL_COUNTS) * 0.0005
    worst_slack = (PROTOCOL_COUNTS.product_e2e + PROTOCOL_COUNTS.other_e2e + 2 * 20) * 0.0005
    p = project(PROTOCOL_INPUTS, PROTOCOL_COUNTS, None)
    assert abs(p.expected_usd - PROTOCOL_PRINTED[0]) <= expected_slack
    assert abs(p.worst_usd - PROTOCOL_PRINTED[1]) <= worst_slack


def test_a_worst_case_over_the_ceiling_is_not_within_it() -> None:
    assert not project(PROTOCOL_INPUTS, PROTOCOL_COUNTS, ceiling_usd=18.0).within_ceiling
    assert "OVER" in "\n".join(projection_lines(project(PROTOCOL_INPUTS, PROTOCOL_COUNTS, 18.0)))


def _case(case_id: str, case_class: str) -> Case:
    return Case.model_validate(
        {
            "id": case_id, "set": "calibration", "class": case_class, "truth": "PRODUCT",
            "description": "d", "goal": "g", "fixture": "f", "target_terms": ["x"],
            "allowed_scopes": ["product_behavior"],
        }
    )  # fmt: skip


def _result(
    root: Path, task: str, session: dict[str, object] | None, outcome: str = "passed"
) -> None:
    folder = root / "results" / "arm" / task
    folder.mkdir(parents=True, exist_ok=True)
    record = {"task": task, "trial": 0, "outcome": outcome,
              "final_answer": None if session is None else json.dumps(session)}  # fmt: skip
    (folder / "0.json").write_text(json.dumps(record), encoding="utf-8")


def test_inputs_come_from_a_calibration_runs_unrounded_per_session_costs(tmp_path: Path) -> None:
    cases = {"C-P01": _case("C-P01", "product_failure"), "C-T01": _case("C-T01", "tester_trap")}
    _result(tmp_path, "c-p01", {"case": "C-P01", "kind": "e2e", "cost_usd": 0.1715})
    _result(tmp_path, "c-t01", {"case": "C-T01", "kind": "e2e", "cost_usd": 0.0321})
    _result(tmp_path, "c-k01", {"case": "C-K01", "kind": "package", "cost_usd": 0.0213})
    _result(tmp_path, "c-k04", None, outcome="not_run")
    inputs = inputs_from_run(tmp_path, cases)
    assert (inputs.product_mean, inputs.other_mean, inputs.package_mean) == (0.1715, 0.0321, 0.0213)
    assert inputs.e2e_max == 0.1715 and inputs.package_max == 0.0213
    assert inputs.calibration_total == pytest.approx(0.1715 + 0.0321 + 0.0213)


def test_a_session_without_a_cost_refuses_the_projection(tmp_path: Path) -> None:
    cases = {"C-P01": _case("C-P01", "product_failure")}
    _result(tmp_path, "c-p01", {"case": "C-P01", "kind": "e2e", "cost_usd": None})
    with pytest.raises(PairbenchError, match="recorded no cost"):
        inputs_from_run(tmp_path, cases)


def test_a_model_free_engine_projects_nothing_to_spend(tmp_path: Path) -> None:
    # The heuristic engine reports no model usage: its sessions cost $0, not "no cost", so
    # the README's calibrate-then-plan steps work with the default engine.
    cases = {"C-P01": _case("C-P01", "product_failure"), "C-T01": _case("C-T01", "tester_trap")}
    free = {"cost_usd": None, "cost_provenance": "not_applicable"}
    _result(tmp_path, "c-p01", {"case": "C-P01", "kind": "e2e", **free})
    _result(tmp_path, "c-t01", {"case": "C-T01", "kind": "e2e", **free})
    _result(tmp_path, "c-k01", {"case": "C-K01", "kind": "package", **free})
    inputs = inputs_from_run(tmp_path, cases)
    assert inputs.calibration_total == 0.0 and inputs.e2e_max == 0.0
    p = project(inputs, PROTOCOL_COUNTS, ceiling_usd=20.0)
    assert (p.expected_usd, p.worst_usd) == (0.0, 0.0) and p.within_ceiling
    # One session that reported nothing at all still refuses: part of the spend is unknown.
    _result(tmp_path, "c-t01", {"case": "C-T01", "kind": "e2e", "cost_usd": None,
                                "cost_provenance": "missing"})  # fmt: skip
    with pytest.raises(PairbenchError, match=r"recorded no cost.*--protocol-figures"):
        inputs_from_run(tmp_path, cases)
