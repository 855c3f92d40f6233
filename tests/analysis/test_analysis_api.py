import pairbench.analysis


def test_public_names_are_deliberate() -> None:
    # Adding or removing a public name must be a deliberate edit of this list.
    assert sorted(pairbench.analysis.__all__) == [
        "MedianDifference",
        "PairedCounts",
        "Proportion",
        "mcnemar_exact",
        "median",
        "order_statistic_rank",
        "paired_counts",
        "paired_median_difference",
        "wilson",
    ]
    for name in pairbench.analysis.__all__:
        assert getattr(pairbench.analysis, name).__doc__
