from hypothesis import given, settings
from hypothesis import strategies as st

from pairbench.analysis import mcnemar_exact
from pairbench.analysis._multiplicity import holm
from pairbench.analysis._newcombe import paired_proportion_difference, phi_correlation

counts = st.integers(min_value=0, max_value=300)
confidences = st.sampled_from([0.8, 0.9, 0.95, 0.99])


@settings(max_examples=300)
@given(counts, counts, counts, counts, confidences)
def test_swapping_arms_negates_difference_and_keeps_p(
    both: int, a_only: int, b_only: int, neither: int, confidence: float
) -> None:
    if both + a_only + b_only + neither == 0:
        return
    ab = paired_proportion_difference(both, a_only, b_only, neither, confidence)
    ba = paired_proportion_difference(both, b_only, a_only, neither, confidence)
    assert ba.difference == -ab.difference
    assert (ba.low, ba.high) == (-ab.high, -ab.low)
    assert ba.phi == ab.phi
    assert phi_correlation(both, b_only, a_only, neither) == phi_correlation(
        both, a_only, b_only, neither
    )
    assert mcnemar_exact(b_only, a_only) == mcnemar_exact(a_only, b_only)


@settings(max_examples=300)
@given(counts, counts, counts, counts, confidences)
def test_interval_contains_estimate_within_bounds(
    both: int, a_only: int, b_only: int, neither: int, confidence: float
) -> None:
    if both + a_only + b_only + neither == 0:
        return
    r = paired_proportion_difference(both, a_only, b_only, neither, confidence)
    assert -1.0 <= r.low <= r.difference <= r.high <= 1.0
    assert -1.0 <= r.phi <= 1.0
    assert -1.0 <= phi_correlation(both, a_only, b_only, neither) <= 1.0 + 1e-12


@given(counts, counts)
def test_mcnemar_p_is_a_probability(a_only: int, b_only: int) -> None:
    assert 0.0 <= mcnemar_exact(a_only, b_only) <= 1.0


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=30))
def test_holm_adjusted_between_raw_and_one(pvalues: list[float]) -> None:
    adjusted = holm(pvalues)
    assert len(adjusted) == len(pvalues)
    assert all(raw <= adj <= 1.0 for raw, adj in zip(pvalues, adjusted, strict=True))


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=30))
def test_holm_keeps_the_order_of_raw_p(pvalues: list[float]) -> None:
    adjusted = holm(pvalues)
    for i, j in zip(range(len(pvalues)), range(1, len(pvalues)), strict=False):
        if pvalues[i] < pvalues[j]:
            assert adjusted[i] <= adjusted[j]
        elif pvalues[i] > pvalues[j]:
            assert adjusted[i] >= adjusted[j]
