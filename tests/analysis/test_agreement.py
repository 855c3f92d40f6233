import itertools
from collections import Counter
from collections.abc import Hashable

import numpy as np
import pytest

from pairbench.analysis import wilson
from pairbench.analysis._agreement import (
    ConfusionMatrix,
    Repeatability,
    confusion_matrix,
    repeatability,
)


def _blamed(outcome: str) -> bool:
    return outcome == "blamed"


def test_repeatability_protocol_example() -> None:
    runs = {
        "P01": ["blamed", "blamed", "blamed"],  # same attribution, same outcome
        "T01": ["set aside", "nothing", "nothing"],  # same attribution, outcomes differ
        "E01": ["blamed", "nothing", "blamed"],  # attribution differs
        "X01": ["nothing", "nothing", "nothing"],
    }
    r = repeatability(runs, key=_blamed)
    assert isinstance(r, Repeatability)
    assert r.consistent == wilson(3, 4)
    assert r.exact_agreement == wilson(2, 4)
    # Pairs per case: 3 of 3, 3 of 3, 1 of 3, 3 of 3.
    assert r.pairwise_agreement == wilson(10, 12)


def test_default_key_is_the_outcome_itself() -> None:
    r = repeatability({"a": [1, 1, 2], "b": [3, 3, 3]})
    assert (r.consistent.k, r.consistent.n) == (1, 2)
    assert r.exact_agreement == r.consistent
    assert (r.pairwise_agreement.k, r.pairwise_agreement.n) == (4, 6)


def _pairwise_by_enumeration(runs: dict[str, list[int]], key: int) -> tuple[int, int]:
    agree = total = 0
    for outcomes in runs.values():
        for x, y in itertools.combinations(outcomes, 2):
            total += 1
            agree += (x % key) == (y % key)
    return agree, total


def test_pairwise_matches_enumeration_with_uneven_runs() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        runs = {
            f"case{i}": [int(v) for v in rng.integers(0, 4, size=int(rng.integers(2, 6)))]
            for i in range(int(rng.integers(1, 12)))
        }
        r = repeatability(runs, key=lambda v: v % 2)
        assert (r.pairwise_agreement.k, r.pairwise_agreement.n) == _pairwise_by_enumeration(runs, 2)
        assert r.consistent.k == sum(len({v % 2 for v in o}) == 1 for o in runs.values())
        assert r.exact_agreement.k == sum(len(set(o)) == 1 for o in runs.values())
        # Identical outcomes imply identical attributions.
        assert r.exact_agreement.k <= r.consistent.k


def test_case_with_one_run_is_named() -> None:
    with pytest.raises(ValueError, match=r"'T04' has 1 run"):
        repeatability({"P01": ["blamed"] * 3, "T04": ["nothing"]})


def test_no_cases_raises() -> None:
    with pytest.raises(ValueError, match="at least one case"):
        repeatability({})


def _random_labels(rng: np.random.Generator, size: int) -> tuple[list[str], list[str]]:
    names = ["PRODUCT", "NOT_PRODUCT", "INCONCLUSIVE_EXPECTED"]
    truth = [names[int(i)] for i in rng.integers(0, 3, size=size)]
    outcome = [names[int(i)] for i in rng.integers(0, 3, size=size)]
    return truth, outcome


def test_confusion_matrix_matches_counter() -> None:
    rng = np.random.default_rng(5)
    for size in (1, 7, 40, 300):
        truth, outcome = _random_labels(rng, size)
        m = confusion_matrix(truth, outcome)
        expected: Counter[tuple[Hashable, Hashable]] = Counter(zip(truth, outcome, strict=True))
        assert isinstance(m, ConfusionMatrix)
        assert m.total == size == sum(map(sum, m.counts))
        assert m.labels == sorted(set(truth) | set(outcome))
        for t, o in itertools.product(m.labels, repeat=2):
            assert m.cell(t, o) == expected[(t, o)]


def test_rectangular_truth_by_outcome() -> None:
    truth = ["PRODUCT", "PRODUCT", "NOT_PRODUCT", "NOT_PRODUCT", "NOT_PRODUCT"]
    outcome = ["blamed", "nothing", "set aside", "nothing", "blamed"]
    m = confusion_matrix(
        truth,
        outcome,
        labels=["PRODUCT", "NOT_PRODUCT"],
        outcome_labels=["blamed", "set aside", "nothing"],
    )
    assert m.counts == [[1, 0, 1], [1, 1, 1]]
    assert m.cell("NOT_PRODUCT", "blamed") == 1
    expected: Counter[tuple[Hashable, Hashable]] = Counter(zip(truth, outcome, strict=True))
    for t, o in itertools.product(m.labels, m.outcome_labels):
        assert m.cell(t, o) == expected[(t, o)]


def test_given_labels_order_and_unseen_labels() -> None:
    m = confusion_matrix(["b", "a"], ["b", "b"], labels=["c", "b", "a"])
    assert m.labels == m.outcome_labels == ["c", "b", "a"]
    assert m.counts == [[0, 0, 0], [0, 1, 0], [0, 1, 0]]


def test_incomparable_labels_keep_first_appearance() -> None:
    m = confusion_matrix([1, "x", None], ["x", 1, 1])
    assert m.labels == [1, "x", None]


def test_confusion_matrix_errors() -> None:
    with pytest.raises(ValueError, match="one outcome per truth"):
        confusion_matrix(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="'z' is not among"):
        confusion_matrix(["a", "z"], ["a", "a"], labels=["a"])
    with pytest.raises(ValueError, match="distinct"):
        confusion_matrix(["a"], ["a"], labels=["a", "a"])
    with pytest.raises(KeyError, match="'q'"):
        confusion_matrix(["a"], ["a"]).cell("q", "a")


def test_empty_confusion_matrix() -> None:
    m = confusion_matrix([], [])
    assert (m.labels, m.counts, m.total) == ([], [], 0)
