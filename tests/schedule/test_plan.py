import hashlib

from pairbench.schedule import build_schedule, derive_seed, model_seed
from pairbench.spec import Experiment


def _experiment(order: str = "alternate") -> Experiment:
    return Experiment.model_validate(
        {
            "id": "exp",
            "version": "1",
            "trials": 4,
            "order": order,
            "agent": {"adapter": "scripted"},
            "arms": {"a": {}, "b": {}, "c": {}},
            "tasks": [
                {"id": "t1", "prompt": "p.md", "grader": {"name": "g"}},
                {"id": "t2", "prompt": "p.md", "grader": {"name": "g"}, "trials": 2},
            ],
        }
    )


def test_seed_is_the_documented_derivation() -> None:
    expected = int.from_bytes(hashlib.sha256(b"exp|7|t1|3").digest()[:8], "big")
    assert derive_seed("exp", 7, "t1", 3) == expected
    assert model_seed(expected) == expected & 0x7FFFFFFF
    assert 0 <= model_seed(2**64 - 1) < 2**31


def test_same_experiment_and_run_seed_give_the_same_schedule() -> None:
    assert build_schedule(_experiment(), 7) == build_schedule(_experiment(), 7)
    assert build_schedule(_experiment(), 7) != build_schedule(_experiment(), 8)


def test_pairs_share_one_seed_and_cover_every_trial() -> None:
    schedule = build_schedule(_experiment(), 1)
    assert [(p.task, p.trial) for p in schedule.pairs] == [
        ("t1", 0),
        ("t1", 1),
        ("t1", 2),
        ("t1", 3),
        ("t2", 0),
        ("t2", 1),
    ]
    assert schedule.attempts == 18
    seeds = [p.seed for p in schedule.pairs]
    assert len(set(seeds)) == len(seeds)
    for pair in schedule.pairs:
        assert pair.seed == derive_seed("exp", 1, pair.task, pair.trial)


def test_alternate_order_rotates_so_each_arm_leads_equally() -> None:
    schedule = build_schedule(_experiment(), 1)
    orders = [p.order for p in schedule.pairs]
    assert orders[0] == ["a", "b", "c"]
    assert orders[1] == ["b", "c", "a"]
    assert orders[2] == ["c", "a", "b"]
    leads = [o[0] for o in orders[:6]]
    assert leads.count("a") == leads.count("b") == leads.count("c") == 2


def test_randomized_order_is_drawn_from_the_run_seed() -> None:
    one = build_schedule(_experiment("randomized"), 3)
    again = build_schedule(_experiment("randomized"), 3)
    other = build_schedule(_experiment("randomized"), 4)
    assert [p.order for p in one.pairs] == [p.order for p in again.pairs]
    assert [p.order for p in one.pairs] != [p.order for p in other.pairs]
    assert all(sorted(p.order) == ["a", "b", "c"] for p in one.pairs)


def test_round_order_runs_first_runs_then_repeat_rounds_then_later_phases() -> None:
    experiment = Experiment.model_validate(
        {
            "id": "exp",
            "version": "1",
            "pair_order": "round",
            "agent": {"adapter": "scripted"},
            "arms": {"a": {}},
            "tasks": [
                {"id": "p01", "prompt": "p.md", "grader": {"name": "g"}, "trials": 3},
                {"id": "p02", "prompt": "p.md", "grader": {"name": "g"}},
                {"id": "k01", "prompt": "p.md", "grader": {"name": "g"}, "phase": 1},
                {"id": "t01", "prompt": "p.md", "grader": {"name": "g"}, "trials": 3},
            ],
        }
    )
    pairs = build_schedule(experiment, 1).pairs
    assert [(p.task, p.trial) for p in pairs] == [
        ("p01", 0),
        ("p02", 0),
        ("t01", 0),
        ("p01", 1),
        ("t01", 1),
        ("p01", 2),
        ("t01", 2),
        ("k01", 0),
    ]
    assert [p.index for p in pairs] == list(range(8))
    # The seeds are the (task, trial)'s, whatever the order: a pair keeps its seed.
    assert all(p.seed == derive_seed("exp", 1, p.task, p.trial) for p in pairs)


def test_round_order_and_phase_are_left_out_of_the_hash_at_their_defaults() -> None:
    plain = _experiment()
    dumped = plain.model_dump(mode="json")
    assert "pair_order" not in dumped
    assert all("phase" not in task for task in dumped["tasks"])
