import doctest
import itertools
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pairbench.analysis._censored
from pairbench.analysis._censored import (
    CensoredDifference,
    censored_median,
    censored_paired_differences,
    paired_median_difference_censored,
)


def test_doctests() -> None:
    assert doctest.testmod(pairbench.analysis._censored).failed == 0


def test_median_below_the_censoring_is_exact() -> None:
    r = censored_median([100, 300, 200, 60_000, 250], [False, False, False, True, False], 60_000)
    assert (r.median, r.display, r.n, r.n_censored, r.reaches_median) == (
        250.0,
        "250",
        5,
        1,
        False,
    )


@pytest.mark.parametrize(
    ("flags", "reaches"),
    [
        ([False, False, True, True], True),  # upper middle value censored
        ([False, False, False, True], False),
        ([False, True, True, True, False], True),
        ([True, True, True], True),
    ],
)
def test_median_reported_as_above_limit_when_censoring_reaches_it(
    flags: list[bool], reaches: bool
) -> None:
    values = [1000.0 + i if not c else 60_000.0 for i, c in enumerate(flags)]
    r = censored_median(values, flags, 60_000, unit="ms")
    assert r.reaches_median is reaches and r.n_censored == sum(flags)
    if reaches:
        assert r.median is None and r.display == "> 60000 ms"
    else:
        assert r.median is not None and r.display.endswith(" ms")


def test_median_errors() -> None:
    with pytest.raises(ValueError, match="no values"):
        censored_median([], [], 10)
    with pytest.raises(ValueError, match="exceeds the limit"):
        censored_median([5.0, 20.0], [False, False], 10)
    with pytest.raises(ValueError, match="one censored flag"):
        censored_median([5.0], [False, True], 10)


def test_paired_differences_say_their_direction() -> None:
    got = censored_paired_differences(
        [5, 60, 7, 60], [3, 4, 60, 60], [False, True, False, True], [False, False, True, True]
    )
    assert got == [
        CensoredDifference(2.0, False, "="),
        CensoredDifference(56.0, True, ">="),
        CensoredDifference(-53.0, True, "<="),
        CensoredDifference(0.0, True, "unknown"),
    ]
    with pytest.raises(ValueError, match="one entry per pair"):
        censored_paired_differences([1], [1, 2], [False], [False])


def test_censoring_that_could_move_the_median_is_flagged_with_bounds() -> None:
    # Differences 2, 3, 5, 6, 2; B timed out in the pairs recording 5 and 6, whose true
    # differences could be far lower, dragging the median from 3 down to 2 at most.
    r = paired_median_difference_censored(
        [5, 6, 9, 7, 8], [3, 3, 4, 1, 6], [False] * 5, [False, False, True, True, False]
    )
    assert (r.n, r.n_censored, r.n_at_least, r.n_at_most, r.n_unknown) == (5, 2, 0, 2, 0)
    assert (r.estimate, r.lower_bound, r.upper_bound, r.could_move) == (3.0, 2.0, 3.0, True)
    # Censoring below the median cannot move it.
    still = paired_median_difference_censored(
        [5, 6, 9, 7, 8], [3, 3, 60, 60, 6], [False] * 5, [False, False, True, True, False]
    )
    assert (still.estimate, still.lower_bound, still.upper_bound) == (2.0, 2.0, 2.0)
    assert not still.could_move and still.n_censored == 2
    both = paired_median_difference_censored([60, 60, 1], [60, 60, 0], [True] * 3, [True] * 3)
    assert both.lower_bound is None and both.upper_bound is None and both.n_unknown == 3
    empty = paired_median_difference_censored([], [], [], [])
    assert empty.estimate is None and empty.n == 0 and not empty.could_move


@given(
    st.lists(
        st.tuples(st.integers(-20, 20), st.integers(-20, 20), st.booleans(), st.booleans()),
        min_size=1,
        max_size=9,
    )
)
def test_bounds_enclose_every_completion_of_the_censored_values(
    rows: list[tuple[int, int, bool, bool]],
) -> None:
    a, b, ca, cb = (list(col) for col in zip(*rows, strict=True))
    r = paired_median_difference_censored(a, b, ca, cb)
    assert r.n_censored == sum(x or y for x, y in zip(ca, cb, strict=True))
    assert r.n_censored == r.n_at_least + r.n_at_most + r.n_unknown
    # Brute force: push each censored difference to each end of its feasible range.
    options = []
    for d in censored_paired_differences(a, b, ca, cb):
        options.append(
            {"=": [d.value], ">=": [d.value, 1e9], "<=": [d.value, -1e9], "unknown": [-1e9, 1e9]}[
                d.direction
            ]
        )
    medians = {statistics.median(choice) for choice in itertools.product(*options)}
    lo = min(medians) if min(medians) > -1e8 else None
    hi = max(medians) if max(medians) < 1e8 else None
    assert (r.lower_bound, r.upper_bound) == (lo, hi)
    assert r.could_move is (len(medians) > 1)
    assert r.estimate == statistics.median([x - y for x, y in zip(a, b, strict=True)])
    swapped = paired_median_difference_censored(b, a, cb, ca)
    assert r.estimate is not None and swapped.estimate == -r.estimate
    assert (swapped.n_at_least, swapped.n_at_most) == (r.n_at_most, r.n_at_least)
