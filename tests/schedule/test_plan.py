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
