"""Confirmation plans: balanced seeded order, the plan file, and approval by hash."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from pairbench._errors import RunRefused
from pairbench.schedule import (
    ConfirmationPlan,
    PlanError,
    approve,
    build_confirmation_plan,
    confirmation_order,
    plan_problems,
    plan_sha256,
    read_plan,
    require_approved,
    write_plan,
)

SCENARIOS = [f"AR-{i:03d}" for i in range(1, 11)]
CREATED = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def _plan(n_pairs: int = 6, run_seed: int = 11) -> ConfirmationPlan:
    return build_confirmation_plan(
        experiment="runtime-revision-ab",
        protocol_hash="ab" * 32,
        screening_run="rra-20260501T100000Z-1a2b3c",
        n_pairs=n_pairs,
        run_seed=run_seed,
        scenarios=SCENARIOS,
        screening_campaign_s=540.0,
        trial_timeout_s=300.0,
        created_at=CREATED,
    )


def _leads(order: list[list[str]]) -> list[str]:
    return [pair[0] for pair in order]


@pytest.mark.parametrize("seed", range(8))
def test_six_pairs_are_three_and_three(seed: int) -> None:
    order = confirmation_order(6, seed, experiment="e")
    assert _leads(order).count("baseline") == 3
    assert _leads(order).count("candidate") == 3
    assert all(sorted(pair) == ["baseline", "candidate"] for pair in order)


def test_five_pairs_are_two_and_three_and_the_coin_lands_both_ways() -> None:
    extras = set()
    for seed in range(16):
        leads = _leads(confirmation_order(5, seed, experiment="e"))
        assert sorted((leads.count("baseline"), leads.count("candidate"))) == [2, 3]
        extras.add("baseline" if leads.count("baseline") == 3 else "candidate")
    assert extras == {"baseline", "candidate"}


def test_order_is_the_documented_derivation() -> None:
    digest = hashlib.sha256(b"e|confirmation|3").digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    firsts = ["baseline", "baseline", "candidate", "candidate"]
    firsts.append(["baseline", "candidate"][int(rng.integers(2))])
    expected = [firsts[int(i)] for i in rng.permutation(5)]
    assert _leads(confirmation_order(5, 3, experiment="e")) == expected


def test_order_reproduces_from_the_seed_and_changes_with_it() -> None:
    assert confirmation_order(6, 7, experiment="e") == confirmation_order(6, 7, experiment="e")
    orders = {str(confirmation_order(6, seed, experiment="e")) for seed in range(6)}
    assert len(orders) > 1
    assert confirmation_order(6, 7, experiment="e", arms=("x", "y"))[0][0] in {"x", "y"}


def test_order_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="at least 1 pair"):
        confirmation_order(0, 1, experiment="e")
    with pytest.raises(ValueError, match="two distinct arms"):
        confirmation_order(4, 1, experiment="e", arms=("a", "a"))


def test_plan_holds_one_scenario_order_floor_and_wall_time() -> None:
    plan = _plan(5)
    assert plan.scenarios == SCENARIOS  # one list: both arms run it as is
    assert plan.smallest_attainable_p == 0.0625
    assert _plan(6).smallest_attainable_p == 0.03125
    assert plan.wall_time.estimate_s == 540.0 * 2 * 5
    assert plan.wall_time.upper_bound_s == 300.0 * 10 * 2 * 5
    assert plan.order == confirmation_order(5, 11, experiment="runtime-revision-ab")
    assert plan.stage == "confirmation"
    assert plan_problems(plan) == []


def test_the_spread_overhead_and_budget_come_from_the_screening() -> None:
    # Two scenarios: the arms took 100 s and 140 s on one, 50 s and 30 s on the other; the
    # screening run spent 20 s per campaign around its attempts.
    plan = build_confirmation_plan(
        experiment="e", protocol_hash="ab" * 32, screening_run="r", n_pairs=3, run_seed=1,
        scenarios=["s1", "s2"], screening_campaign_s=160.0, trial_timeout_s=300.0,
        created_at=CREATED, overhead_campaign_s=20.0,
        scenario_s={"s1": [100.0, 140.0], "s2": [50.0, 30.0]}, budget_s=3000.0,
    )  # fmt: skip
    wall = plan.wall_time
    assert wall.estimate_s == (160 + 20) * 2 * 3
    assert (wall.low_s, wall.high_s) == ((100 + 30 + 20) * 6, (140 + 50 + 20) * 6)
    # A pair at the high end takes 2 x 210 s = 420 s: 7 fit in 3,000 s.
    assert wall.pairs_in_budget == 7
    assert plan_problems(plan) == []


def test_a_plan_from_before_the_spread_keeps_its_hash_and_approval(tmp_path: Path) -> None:
    plan = _plan()
    old = plan.model_dump(mode="json", exclude={"approval"})
    for name in ("overhead_campaign_s", "low_s", "high_s", "budget_s", "pairs_in_budget"):
        assert old["wall_time"].pop(name) is None
    canonical = json.dumps(old, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    old_sha = hashlib.sha256(canonical.encode()).hexdigest()
    path = tmp_path / "old-plan.json"
    old["approval"] = {"by": "Ada", "at": "2026-05-01T12:00:00+00:00", "plan_sha256": old_sha}
    path.write_text(json.dumps(old), encoding="utf-8")
    assert plan_sha256(read_plan(path)) == old_sha
    assert require_approved(path).approval is not None


def test_plan_hash_is_canonical_json_without_approval(tmp_path: Path) -> None:
    plan = _plan()
    data = plan.model_dump(mode="json", exclude={"approval"}, exclude_none=True)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert plan_sha256(plan) == hashlib.sha256(canonical.encode()).hexdigest()
    path = tmp_path / "plan.json"
    assert write_plan(path, plan) == plan_sha256(plan)
    assert read_plan(path) == plan
    approved = approve(path, "Ada")
    assert plan_sha256(approved) == plan_sha256(plan)


def test_approve_then_require_approved(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    write_plan(path, _plan())
    at = datetime(2026, 5, 2, 9, 30, tzinfo=UTC)
    approved = approve(path, "Ada", at=at)
    assert approved.approval is not None
    assert (approved.approval.by, approved.approval.at) == ("Ada", at)
    assert approved.approval.plan_sha256 == plan_sha256(_plan())
    assert require_approved(path) == approved
    with pytest.raises(PlanError, match="already approved by Ada at 2026-05-02T09:30:00"):
        approve(path, "Grace")


def test_an_unapproved_plan_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    write_plan(path, _plan())
    with pytest.raises(RunRefused, match=r"not approved.*pairbench approve .*plan.json --by NAME"):
        require_approved(path)


def test_a_byte_edit_after_approval_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    write_plan(path, _plan(6))
    approve(path, "Ada")
    text = path.read_text()
    assert '"n_pairs": 6,' in text
    path.write_text(text.replace('"n_pairs": 6,', '"n_pairs": 7,'))
    with pytest.raises(RunRefused, match=r"changed after approval .*a new plan is needed"):
        require_approved(path)


def test_write_plan_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    write_plan(path, _plan(6))
    before = path.read_bytes()
    with pytest.raises(PlanError, match="already exists"):
        write_plan(path, _plan(8))
    assert path.read_bytes() == before


def test_write_plan_refuses_an_inconsistent_plan(tmp_path: Path) -> None:
    plan = _plan(6).model_copy(update={"n_pairs": 7})
    with pytest.raises(PlanError, match="order lists 6 pairs but n_pairs is 7"):
        write_plan(tmp_path / "plan.json", plan)
    assert not (tmp_path / "plan.json").exists()


def test_a_malformed_plan_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    write_plan(path, _plan())
    data = json.loads(path.read_text())
    data["n_pairs"] = "six"
    path.write_text(json.dumps(data))
    with pytest.raises(
        PlanError, match=r"plan\.json is not a valid confirmation plan: field n_pairs"
    ):
        read_plan(path)
    del data["n_pairs"], data["created_at"]
    path.write_text(json.dumps(data))
    with pytest.raises(PlanError, match=r"field n_pairs: Field required \(and 1 more\)"):
        read_plan(path)
    path.write_text('{"experiment": ')
    with pytest.raises(PlanError, match=r"plan\.json is not a valid confirmation plan: .*JSON"):
        read_plan(path)
    with pytest.raises(PlanError, match="cannot read the plan"):
        read_plan(tmp_path / "missing.json")


def test_approve_refuses_a_blank_name(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    write_plan(path, _plan())
    with pytest.raises(PlanError, match="--by NAME"):
        approve(path, "  ")
    assert read_plan(path).approval is None
