import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairbench.analysis import PairedCounts, paired_counts


def test_counts_each_cell() -> None:
    a = [True, True, True, False, False, True]
    b = [True, False, False, True, False, True]
    c = paired_counts(a, b)
    assert c == PairedCounts(both=2, a_only=2, b_only=1, neither=1)
    assert c.n == 6


def test_empty() -> None:
    assert paired_counts([], []) == PairedCounts(0, 0, 0, 0)


def test_length_mismatch_raises() -> None:
    with pytest.raises(ValueError, match="one value per trial"):
        paired_counts([True], [True, False])


@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=60))
def test_swapping_arms_swaps_discordant_counts(pairs: list[tuple[bool, bool]]) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    ab, ba = paired_counts(a, b), paired_counts(b, a)
    assert (ba.both, ba.a_only, ba.b_only, ba.neither) == (
        ab.both,
        ab.b_only,
        ab.a_only,
        ab.neither,
    )
    assert ab.n == len(pairs)
