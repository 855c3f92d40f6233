import pairbench.analysis


def test_public_names_are_deliberate() -> None:
    # Adding or removing a public name must be a deliberate edit of this list.
    assert sorted(pairbench.analysis.__all__) == [
        "BootstrapInterval",
        "CensoredDifference",
        "CensoredMedian",
        "CensoredMedianDifference",
        "ClusteredMean",
        "ConfusionMatrix",
        "HodgesLehmann",
        "MedianDifference",
        "PairedCounts",
        "PairedEquivalence",
        "PairedMeanDifference",
        "PairedProportionDifference",
        "PowerRow",
        "Proportion",
        "RateEquivalence",
        "Repeatability",
        "censored_median",
        "censored_paired_differences",
        "cluster_bootstrap",
        "cluster_bootstrap_paired",
        "clustered_standard_error",
        "confusion_matrix",
        "hodges_lehmann",
        "holm",
        "mcnemar_exact",
        "mcnemar_power",
        "mcnemar_sample_size",
        "median",
        "order_statistic_rank",
        "paired_counts",
        "paired_equivalence",
        "paired_mean_difference",
        "paired_median_difference",
        "paired_median_difference_censored",
        "paired_proportion_difference",
        "paired_rate_equivalence",
        "phi_correlation",
        "power_table",
        "repeatability",
        "wilson",
    ]
    for name in pairbench.analysis.__all__:
        assert getattr(pairbench.analysis, name).__doc__
